/**
 * A reader that stopped early (`govops apply manifests | head`, `2>&1 | head`, `npm start | head`, a log collector
 * gone): the first write after it left fails with EPIPE, and the stream is destroyed, so what is left to print is
 * dropped. The command runs to its end with its own exit code: before, the `error` event reached the crash handler,
 * and an apply stopped in the middle of its work (integrations created but not polled, data sources not registered)
 * with `error: write EPIPE`, exit 1. Any other error on the stream is handed to `crash`.
 */
export function dropOutputWhenReaderLeaves(crash: (err: unknown) => void): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') crash(err);
    });
  }
}
