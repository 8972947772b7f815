/** The `--log-level` choices. Kept apart from context.ts so registering the options does not load pino. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
