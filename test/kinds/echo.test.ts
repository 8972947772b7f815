/**
 * Each kind's fields as a service may echo them (interface 2.2-2.8): created by apply through the sandbox, read back
 * through a proxy that rewrites the answers (test/helpers/rewriting-proxy.ts), and the plan after must be a no-op.
 */
import { cp, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MASKED_KEYS } from '../../src/kinds/registry.js';
import { runGovops } from '../helpers/cli.js';
import { objectStoreManifest } from '../helpers/manifests.js';
import { mapJsonBody, type ProxiedRequest, type ProxiedResponse } from '../helpers/rewriting-proxy.js';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { rig, webhookManifest, type Rig } from '../apply/inproc.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const isIntegrationGet = (q: ProxiedRequest): boolean => q.method === 'GET' && /^\/integrations(\/[^/]+)?$/.test(q.path);
const eachConfig = (res: ProxiedResponse, fn: (c: Record<string, unknown>) => void): ProxiedResponse =>
  mapJsonBody(res, (v) => {
    for (const i of Array.isArray(v) ? v : [v]) {
      const config = (i as { config?: unknown } | null)?.config;
      if (config && typeof config === 'object') fn(config as Record<string, unknown>);
    }
    return v;
  });

/** `govops export --kind KIND` through the proxy, then `validate --strict` of what it wrote: both exit 0. */
async function exportValidates(x: Rig, kind: 'Integration' | 'Webhook'): Promise<void> {
  const conn = { GOVOPS_URL: x.proxy!.url, GOVOPS_TOKEN: x.sandbox.adminToken };
  const exp = await runGovops(['export', '--out', 'exported', '--kind', kind], { cwd: x.dir, env: conn });
  expect(exp.code, exp.stderr).toBe(0);
  const validate = await runGovops(['validate', 'exported', '--strict'], { cwd: x.dir });
  expect(validate.code, validate.stdout + validate.stderr).toBe(0);
}

async function planned(x: Rig, opts: Parameters<Rig['run']>[0] = {}): Promise<string[]> {
  const res = await x.run({ apply: false, ...opts });
  expect(res.ok, res.error).toBe(true);
  return (res.plan?.changes ?? []).filter((c) => c.action !== 'noop').map((c) => `${c.resourceKind}/${c.name} ${c.action}${c.blocked ? ` [${c.blocked.code}]` : ''}`);
}

describe('a string field the service echoes as a number (an account id held as a number)', () => {
  let numeric = false;
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    numeric && isIntegrationGet(q)
      ? eachConfig(res, (c) => {
          if (typeof c.cloudAccountId === 'string' && /^[0-9]+$/.test(c.cloudAccountId)) c.cloudAccountId = Number(c.cloudAccountId);
        })
      : res;

  it('object_store cloudAccountId "123456789012" echoed as 123456789012: no change (not a replace of a non-editable field)', async () => {
    numeric = false;
    r = await rig({ rewrite });
    await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    expect((await r.run()).ok).toBe(true);
    numeric = true;
    expect(await planned(r)).toEqual([]);
  });

  it('export writes it as the string the schema asks for: the export validates', async () => {
    numeric = false;
    r = await rig({ rewrite });
    await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    expect((await r.run()).ok).toBe(true);
    numeric = true;
    const conn = { GOVOPS_URL: r.proxy!.url, GOVOPS_TOKEN: r.sandbox.adminToken };
    const exp = await runGovops(['export', '--out', 'exported'], { cwd: r.dir, env: conn });
    expect(exp.code, exp.stderr).toBe(0);
    const files = await readdir(path.join(r.dir, 'exported'));
    const text = (await Promise.all(files.map((f) => readFile(path.join(r!.dir, 'exported', f), 'utf8')))).join('\n');
    expect(text).toMatch(/cloudAccountId: "123456789012"|cloudAccountId: '123456789012'/);
    const validate = await runGovops(['validate', 'exported', '--strict'], { cwd: r.dir });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
  });
});

describe('every kind of the examples read back in other JSON forms', () => {
  /** Numbers as their digits, digit strings as numbers, lists reversed: every scalar of every config. */
  const otherForm = (v: unknown): unknown => {
    if (typeof v === 'number') return String(v);
    if (typeof v === 'string' && /^[0-9]{1,15}$/.test(v)) return Number(v);
    if (Array.isArray(v)) return v.map(otherForm).reverse();
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, otherForm(x)]));
    return v;
  };
  let on = false;
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    on && isIntegrationGet(q) && res.status === 200
      ? eachConfig(res, (c) => {
          for (const [k, v] of Object.entries(c)) c[k] = otherForm(v);
        })
      : res;

  it.each([[[] as string[]], [['omit-defaults']], [['echo-sent']], [['null-unset', 'mask-more', 'other-mask', 'lower-hosts', 'shuffle']], [['omit-masked', 'extra-fields', 'numeric-ids']]])('behaviours %j: the plan after apply is a no-op', async (behaviours) => {
    on = false;
    r = await rig({ transitionMs: 10, rewrite, behaviours });
    await cp(EXAMPLES, path.join(r.dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    Object.assign(r.env, exampleEnv('forms'));
    const res = await r.run();
    expect(res.ok, res.error).toBe(true);
    on = true;
    expect(await planned(r)).toEqual([]);
  });

  it('export reads them back as the manifests say them: the export validates with --strict', async () => {
    on = false;
    r = await rig({ transitionMs: 10, rewrite });
    await cp(EXAMPLES, path.join(r.dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    Object.assign(r.env, exampleEnv('forms'));
    expect((await r.run()).ok).toBe(true);
    on = true;
    await exportValidates(r, 'Integration');
  });
});

describe('an enum value the service echoes in another case (authenticationType stored case-insensitively)', () => {
  let cased: ((s: string) => string) | undefined;
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    cased && isIntegrationGet(q) && res.status === 200
      ? eachConfig(res, (c) => {
          if (typeof c.authenticationType === 'string') c.authenticationType = cased!(c.authenticationType);
        })
      : res;

  it.each([['lower', (s: string) => s.toLowerCase()], ['upper', (s: string) => s.toUpperCase()]])('%s-cased: the plan after apply is a no-op, and export validates', async (_name, fn) => {
    cased = undefined;
    r = await rig({ transitionMs: 10, rewrite });
    await cp(EXAMPLES, path.join(r.dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    Object.assign(r.env, exampleEnv('cased'));
    const res = await r.run();
    expect(res.ok, res.error).toBe(true);
    cased = fn;
    expect(await planned(r)).toEqual([]);
    await exportValidates(r, 'Integration');
  });
});

describe('statuses the service sends in another case (ENABLED, Passed)', () => {
  let on = false;
  const upper = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(upper);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === 'status' && typeof x === 'string' ? x.toUpperCase() : upper(x)]));
    }
    return v;
  };
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    on && q.path.startsWith('/integrations') && res.status < 300 ? mapJsonBody(res, upper) : res;

  it('apply ends with enabled integrations, and the plan after it is a no-op', async () => {
    on = true;
    r = await rig({ transitionMs: 10, rewrite });
    await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    const res = await r.run({ timeoutMs: 3_000, pollIntervalMs: 10, pollMaxIntervalMs: 50 });
    expect(res.ok, res.error).toBe(true);
    expect(res.outcomes?.map((o) => o.result)).toEqual(['ok']);
    expect(await planned(r)).toEqual([]);
  });
});

describe('webhook enum values the service echoes in another case (actionType, notificationType)', () => {
  let on = false;
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    on && q.method === 'GET' && q.path.startsWith('/webhooks') && res.status === 200
      ? mapJsonBody(res, (v) => {
          for (const w of (Array.isArray(v) ? v : [v]) as Array<Record<string, unknown>>) {
            if (typeof w.actionType === 'string') w.actionType = w.actionType.toUpperCase();
            if (Array.isArray(w.notificationType)) w.notificationType = w.notificationType.map((t) => String(t).toUpperCase()).reverse();
          }
          return v;
        })
      : res;

  it('the plan after apply is a no-op, and export validates', async () => {
    on = false;
    r = await rig({ transitionMs: 10, rewrite });
    r.env.GOVOPS_SECRET_HOOK_SECRET = 's3cret-hook-value';
    await r.write('hook.yaml', webhookManifest('hook', ['modelCreated', 'modelDeleted']));
    expect((await r.run()).ok).toBe(true);
    on = true;
    expect(await planned(r)).toEqual([]);
    await exportValidates(r, 'Webhook');
  });
});

describe('an integration type the service echoes in another case (OBJECT_STORE)', () => {
  let on = false;
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    on && isIntegrationGet(q) && res.status === 200
      ? mapJsonBody(res, (v) => {
          for (const i of (Array.isArray(v) ? v : [v]) as Array<Record<string, unknown>>) if (typeof i.type === 'string') i.type = i.type.toUpperCase();
          return v;
        })
      : res;

  it('the plan after apply is a no-op, and export validates', async () => {
    on = false;
    r = await rig({ transitionMs: 10, rewrite });
    await r.write('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/base/'));
    expect((await r.run()).ok).toBe(true);
    on = true;
    expect(await planned(r)).toEqual([]);
    await exportValidates(r, 'Integration');
  });
});

describe('masked credentials in other shapes (empty string, null, absent, another mask), nested ones too', () => {
  const shapes: Array<[string, (c: Record<string, unknown>, k: string) => void]> = [
    ['empty string', (c, k) => { c[k] = ''; }],
    ['null', (c, k) => { c[k] = null; }],
    ['absent', (c, k) => { delete c[k]; }],
    ['another mask', (c, k) => { c[k] = '<hidden>'; }],
  ];
  let shape: ((c: Record<string, unknown>, k: string) => void) | undefined;
  const walk = (o: Record<string, unknown>): void => {
    for (const [k, v] of Object.entries(o)) {
      if (MASKED_KEYS.has(k) && k !== 'username') shape!(o, k);
      else if (v && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>);
    }
  };
  const rewrite = (q: ProxiedRequest, res: ProxiedResponse): ProxiedResponse =>
    shape && isIntegrationGet(q) && res.status === 200 ? eachConfig(res, walk) : res;

  it.each(shapes)('%s: the plan after apply is a no-op, and export validates', async (_name, fn) => {
    shape = undefined;
    r = await rig({ transitionMs: 10, rewrite });
    await cp(EXAMPLES, path.join(r.dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    Object.assign(r.env, exampleEnv('masks'));
    expect((await r.run()).ok).toBe(true);
    shape = fn;
    expect(await planned(r)).toEqual([]);
    const conn = { GOVOPS_URL: r.proxy!.url, GOVOPS_TOKEN: r.sandbox.adminToken };
    const exp = await runGovops(['export', '--out', 'exported', '--kind', 'Integration'], { cwd: r.dir, env: conn });
    expect(exp.code, exp.stderr).toBe(0);
    const validate = await runGovops(['validate', 'exported'], { cwd: r.dir });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
  });
});
