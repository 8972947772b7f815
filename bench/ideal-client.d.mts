// Types of ideal-client.mjs for the TypeScript test that checks it.
export function body(i: number): Record<string, unknown>;
export function idealClient(options: { url: string; token: string; n: number; transitionMs: number; concurrency: number }): Promise<{ seen: Array<{ id: string; at: number }>; doneAt: number }>;
