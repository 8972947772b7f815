/** Shared pieces of the daemon tests: temp dirs, waiting, HTTP, manifests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lakehouseManifest } from '../helpers/manifests.js';

export class Cleanup {
  private fns: Array<() => Promise<unknown> | unknown> = [];
  add(fn: () => Promise<unknown> | unknown): void {
    this.fns.push(fn);
  }
  async run(): Promise<void> {
    for (const fn of this.fns.reverse()) {
      try {
        await fn();
      } catch {
        // keep cleaning
      }
    }
    this.fns = [];
  }
  async tmp(prefix: string): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), prefix));
    this.add(() => rm(d, { recursive: true, force: true }));
    return d;
  }
}

export async function until<T>(check: () => T | Promise<T>, timeoutMs = 15_000, what = 'condition'): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`${what} not met within ${timeoutMs}ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // text
  }
  return { status: res.status, body };
}

/** A lakehouse integration (autoBootstrap true) with its token from the environment. */
export function lakehouse(name: string, httpPath: string, host = 'lake1.example.com'): string {
  return lakehouseManifest({ name, host, httpPath, tokenEnv: 'GOVOPS_SECRET_TEST_LAKE_TOKEN' });
}

export function webhook(name: string, url: string): string {
  return `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: ${url}
  global: true
  notificationType: [healthCheckFailed]
  actionType: triggered
`;
}

export const GOVOPS_SECRET_LAKE_TOKEN = 'lake-t0ken-value-xyz';
