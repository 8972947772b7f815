/**
 * `govops export --state` records what `govops state adopt --id` records (docs/decisions.md "--state"), the live
 * item's identity included: a service that gives a deleted item's id to a new one (behaviour `reuse-ids`) then makes
 * the recorded id name someone else's item, and the next plan must see the entry as stale (plan/stale.ts) and leave
 * that item alone, not adopt it and replace (delete) it to make it the exported one.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops } from '../helpers/cli.js';

let sandbox: SandboxHandle;
let dir: string;
beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, transitionMs: 10, behaviours: ['reuse-ids'] });
  dir = await mkdtemp(path.join(tmpdir(), 'govops-export-identity-'));
});
afterEach(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

async function call(method: string, url: string, auth: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandbox.url}${url}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  expect(res.status, text).toBeLessThan(300);
  return text ? JSON.parse(text) : undefined;
}

const hook = (name: string, url: string): unknown => ({ webhooks: [{ name, url, global: false, notificationType: ['modelCreated'], actionType: 'triggered' }] });
const sql = (host: string): unknown => ({ type: 'sql_analytics', autoBootstrap: false, config: { host, database: 'gov', schema: 's', username: 'u', password: 'p' } });

interface PlanJson {
  changes: Array<{ resourceKind: string; name: string; action: string; id?: string }>;
}

describe('export --state, then the id given to another item', () => {
  it('the exported entries are stale: the other team\'s webhook and integration are left alone', async () => {
    const bearer = `Bearer ${sandbox.adminToken}`;
    await call('POST', '/webhooks', bearer, hook('pager', 'https://h.example.com/pager'));
    await call('POST', '/integrations', sandbox.adminToken, sql('a.example.com'));
    sandbox.finishTransitions();
    const env = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken, GOVOPS_SECRET_A_EXAMPLE_COM_USERNAME: 'u', GOVOPS_SECRET_A_EXAMPLE_COM_PASSWORD: 'p' };
    const exp = await runGovops(['export', '--out', 'm', '--state', 's.json'], { cwd: dir, env });
    expect(exp.code, exp.stderr).toBe(0);
    const state = JSON.parse(await readFile(path.join(dir, 's.json'), 'utf8')) as { resources: Array<{ kind: string; identity?: string }> };
    for (const r of state.resources) expect(r.identity, r.kind).toEqual(expect.any(String));

    // both deleted in the service, and their ids given to another team's items
    await call('DELETE', '/webhooks/1', bearer);
    await call('DELETE', '/integrations/1', sandbox.adminToken);
    sandbox.finishTransitions();
    await call('POST', '/webhooks', bearer, hook('team-b-hook', 'https://teamb.example.com/x'));
    await call('POST', '/integrations', sandbox.adminToken, sql('team-b.example.com'));
    sandbox.finishTransitions();

    const plan = await runGovops(['plan', 'm', '--state', 's.json', '--allow-replace', '-o', 'json'], { cwd: dir, env });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const changes = (JSON.parse(plan.stdout) as PlanJson).changes.map((c) => `${c.resourceKind}/${c.name} ${c.action}`).sort();
    expect(changes).toEqual(['Integration/a-example-com create', 'Webhook/pager create']);
  });
});
