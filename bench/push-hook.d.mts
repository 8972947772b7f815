// Types of push-hook.mjs for the TypeScript test that runs it.
export function signedPush(secret: string, push: { ref?: string; after: string; delivery?: string }): { body: string; headers: Record<string, string> };
