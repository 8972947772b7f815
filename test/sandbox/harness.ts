/** Shared helpers for the sandbox conformance tests: a real sandbox on 127.0.0.1:0 and a tiny HTTP caller. */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../src/sandbox/index.js';
import { INTEGRATION_TYPES } from '../../src/kinds/registry.js';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;  
}

export async function start(options: SandboxOptions = {}): Promise<SandboxHandle> {
  return startSandbox({ port: 0, transitionMs: 50, ...options });
}

/**
 * One sandbox for a test file (transitions of 20 ms), started before its tests, closed after them and, unless `reset`
 * is false, reset before each: the tests use `box.sb`.
 */
export function sandboxPerFile(options: { reset?: boolean } = {}): { readonly sb: SandboxHandle } {
  let handle: SandboxHandle | undefined;
  beforeAll(async () => {
    handle = await start({ transitionMs: 20 });
  });
  afterAll(async () => {
    await handle?.close();
  });
  if (options.reset !== false) beforeEach(() => handle!.reset());
  return {
    get sb(): SandboxHandle {
      if (!handle) throw new Error('the sandbox starts in beforeAll');
      return handle;
    },
  };
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  raw?: string;
  contentType?: string;
}

export async function call(sb: SandboxHandle, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = opts.token === undefined ? sb.adminToken : opts.token;
  if (token !== null) headers.authorization = token;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const res = await fetch(sb.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

export const bearer = (token: string): string => `Bearer ${token}`;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll the status endpoint until it leaves the transitional statuses (or 404s). */
export async function settle(sb: SandboxHandle, id: string | number, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(sb, 'GET', `/integrations/${id}/status`);
    if (r.status === 404) return 'removed';
    if (!['creating', 'editing', 'deleting'].includes(r.body.status)) return r.body.status as string;
    if (Date.now() > deadline) throw new Error(`integration ${id} still ${r.body.status}`);
    await sleep(20);
  }
}

/** A valid API body per kind (hosts under example.com, unique per `n`). */
export function bodyFor(type: string, n = 1, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const configs: Record<string, { autoBootstrap?: boolean; config?: Record<string, unknown> }> = {
    object_store: {
      autoBootstrap: false,
      config: {
        name: `store-${n}`,
        cloudAccountId: '123456789012',
        cloudRegion: 'eu-west-1',
        cloudLocationRole: 'arn:role/location',
        cloudLocationPath: `s3://bucket-${n}/`,
        authenticationType: 'accessKey',
        cloudAccessKeyId: 'AKIAEXAMPLE',
        cloudSecretAccessKey: 'object-store-secret',
      },
    },
    sql_analytics: {
      autoBootstrap: true,
      config: { host: `sql${n}.example.com`, database: 'govdb', schema: 'secure', username: 'svc', password: 'sql-secret' },
    },
    lakehouse: {
      autoBootstrap: true,
      config: { workspaceUrl: `https://lake${n}.example.com`, httpPath: '/sql/1.0/warehouses/abc', token: 'lake-secret' },
    },
    dataset_warehouse: {
      autoBootstrap: false,
      config: { role: `role-${n}`, datasetSuffix: '_secure', location: 'EU', credential: '{"type":"service_account"}' },
    },
    columnar_warehouse: {
      autoBootstrap: true,
      config: {
        host: `col${n}.example.com`,
        database: 'gov',
        initialDatabase: 'dev',
        authenticationType: 'userPassword',
        username: 'svc',
        password: 'col-secret',
      },
    },
    cloud_warehouse: {
      autoBootstrap: true,
      config: {
        host: `cw${n}.example.com`,
        warehouse: 'COMPUTE_WH',
        database: 'GOV',
        authenticationType: 'userPassword',
        username: 'svc',
        password: 'cw-secret',
        role: 'ACCOUNTADMIN',
      },
    },
    distributed_sql: {},
  };
  const base = configs[type]!;
  return { type, ...base, ...overrides };
}

export const KINDS = INTEGRATION_TYPES;

export const DELETE_PAYLOAD = { authenticationType: 'userPassword', username: 'admin', password: 'admin-secret' };
export const CLOUD_DELETE_PAYLOAD = { ...DELETE_PAYLOAD, role: 'ACCOUNTADMIN' };
