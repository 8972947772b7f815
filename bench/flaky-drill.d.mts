// Types of flaky-drill.mjs for the TypeScript test that runs it on the sources.
import type { ServiceApi } from '../src/api/client-types.js';
import type { ServiceClientOptions } from '../src/api/client.js';
import type { LiveIntegration, LiveWebhook } from '../src/api/types.js';
import type { ReconcileOptions, ReconcileResult } from '../src/reconcile/types.js';
import type { SandboxHandle, SandboxOptions } from '../src/sandbox/index.js';
import type { GovopsState } from '../src/state/types.js';
import type { Logger } from 'pino';

export interface DrillParts {
  startSandbox(options: SandboxOptions): Promise<SandboxHandle>;
  ServiceClient: new (options: ServiceClientOptions) => ServiceApi;
  reconcile(api: ServiceApi, opts: ReconcileOptions & { statePath: string; env?: NodeJS.ProcessEnv }): Promise<ReconcileResult>;
  parseState(text: string, file: string): GovopsState;
  silentLogger(): Logger;
}

export interface DrillOptions {
  integrations?: number;
  webhooks?: number;
  seed?: number;
  timeoutMs?: number;
  lateMs?: number;
  baseDelayMs?: number;
  /** The client's retries after the first attempt (default 8: the service fails about 25% of requests). */
  retries?: number;
  transitionMs?: number;
  /** false: the same apply on a healthy service (the baseline). */
  faults?: boolean;
}

export interface DrillResult {
  applied: ReconcileResult;
  next: ReconcileResult;
  integrations: LiveIntegration[];
  webhooks: LiveWebhook[];
  state: GovopsState;
  stats: { requests: number; retries: number; byStatus: Record<string, number>; wallMs: number };
  faultedRequests: number;
  /** Every POST /webhooks the sandbox answered (status 0: dropped). */
  webhookPosts: Array<{ status: number; durationMs: number }>;
}

export function seeded(seed: number): () => number;
export function objectStore(name: string): string;
export function hook(name: string): string;
export function flakyDrill(govops: DrillParts, opts?: DrillOptions): Promise<DrillResult>;
