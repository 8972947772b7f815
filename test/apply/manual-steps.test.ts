/**
 * The manual-flow gate against the sandbox over HTTP: a create, edit or delete of an integration with
 * autoBootstrap false is not sent until the manifest acknowledges the platform script (the request log
 * proves it); the rest of the revision goes ahead; `--manual-steps trust` sends at once.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { manualLakeConfig, manualLakeManifest } from '../helpers/manifests.js';
import { harness, requestLines } from './harness.js';
import { lakeManifest, rig, sqlManifest, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, { GOVOPS_SECRET_LAKE_TOKEN: 'tok-manual-1111', GOVOPS_SECRET_SQL_PASSWORD: 'pw-manual-2222' });
});
afterEach(async () => {
  await r.close();
});

const writes = (): string[] => r.lines().filter((l) => !l.startsWith('GET'));

const manualLake = (httpPath: string, ack?: string): string => manualLakeManifest(httpPath, ack, { owner: 'data-platform' });
const lakeAck = (phase: 'create' | 'edit', httpPath: string) => `${phase}:${manualStepToken(phase, 'lakehouse', manualLakeConfig(httpPath))}`;

const sqlConfig = { host: 'db.example.com', database: 'governance', schema: 'views', username: 'svc', password: { fromEnv: 'GOVOPS_SECRET_SQL_PASSWORD' }, port: 1433 };
const sqlAck = (phase: 'create' | 'edit' | 'delete' | 'cleanup') => `${phase}:${manualStepToken(phase, 'sql_analytics', sqlConfig)}`;

const outcome = (res: ReconcileResult, name: string) => res.outcomes.find((o) => o.name === name);

describe('manual-flow integrations wait for the acknowledgment (sandbox over HTTP)', () => {
  it('create: not sent without the acknowledgment while the rest of the revision is applied; sent once acknowledged', async () => {
    await r.write('lake.yaml', manualLake('/sql/1'));
    await r.write('other.yaml', lakeManifest('other', 'other.example.com'));
    const first = await r.run();
    expect(first.ok, first.error).toBe(true);
    expect(outcome(first, 'other')).toMatchObject({ action: 'create', result: 'ok' });
    expect(outcome(first, 'lake')).toMatchObject({ action: 'create', result: 'blocked' });
    expect(outcome(first, 'lake')!.error).toContain('govops scripts lake --phase create m/lake.yaml');
    expect(writes().filter((l) => l.startsWith('POST'))).toEqual(['POST /integrations?dryRun=true 200', 'POST /integrations 200']);
    expect((await r.api.listIntegrations()).map((i) => i.config.workspaceUrl)).toEqual(['https://other.example.com']);
    // the state holds nothing for it: the next plan creates it again
    expect((await r.state()).resources.map((x) => x.name)).toEqual(['other']);

    await r.write('lake.yaml', manualLake('/sql/1', lakeAck('create', '/sql/1')));
    r.sandbox.clearRequests();
    const second = await r.run();
    expect(second.ok, second.error).toBe(true);
    expect(second.outcomes).toEqual([expect.objectContaining({ name: 'lake', action: 'create', result: 'ok' })]);
    expect(writes().filter((l) => l.startsWith('POST'))).toEqual(['POST /integrations?dryRun=true 200', 'POST /integrations 200']);
  });

  it('edit: no PUT without the acknowledgment; applied with the matching one; a stale one blocks again', async () => {
    await r.write('lake.yaml', manualLake('/sql/1', lakeAck('create', '/sql/1')));
    expect((await r.run()).ok).toBe(true);
    const id = (await r.state()).resources[0]!.id;

    await r.write('lake.yaml', manualLake('/sql/2', lakeAck('create', '/sql/1')));
    r.sandbox.clearRequests();
    const blocked = await r.run();
    expect(blocked.ok).toBe(true);
    expect(blocked.changed).toBe(false); // nothing was done: a wait is not a change made
    expect(outcome(blocked, 'lake')).toMatchObject({ action: 'update', result: 'blocked' });
    expect(blocked.plan!.changes[0]!.manualStep).toMatchObject({
      status: 'awaiting',
      scripts: [{ phase: 'edit', command: 'govops scripts lake --phase edit m/lake.yaml' }],
      acknowledgment: { value: lakeAck('edit', '/sql/2') },
    });
    expect(writes()).toEqual([]);
    expect((await r.api.getIntegration(id)).config.httpPath).toBe('/sql/1');

    await r.write('lake.yaml', manualLake('/sql/2', lakeAck('edit', '/sql/2')));
    r.sandbox.clearRequests();
    const applied = await r.run();
    expect(applied.ok, applied.error).toBe(true);
    expect(outcome(applied, 'lake')).toMatchObject({ action: 'update', result: 'ok' });
    expect(writes()).toEqual([`PUT /integrations/${id}?dryRun=true 200`, `PUT /integrations/${id} 200`]);
    expect((await r.api.getIntegration(id)).config.httpPath).toBe('/sql/2');
    // applied: the next plan is a no-op, whatever the annotation says
    expect((await r.run({ apply: false })).changed).toBe(false);

    // the configuration changes again after the script ran: the acknowledgment is stale
    await r.write('lake.yaml', manualLake('/sql/3', lakeAck('edit', '/sql/2')));
    r.sandbox.clearRequests();
    const stale = await r.run();
    expect(outcome(stale, 'lake')).toMatchObject({ result: 'blocked' });
    expect(stale.plan!.changes[0]!.manualStep!.reason).toMatch(/another configuration/);
    expect(writes()).toEqual([]);
  });

  it('a replace that needs --allow-replace is blocked for that, not reported as awaiting a manual step', async () => {
    await r.write('lake.yaml', manualLake('/sql/1', lakeAck('create', '/sql/1')));
    expect((await r.run()).ok).toBe(true);
    // `catalog` cannot be edited: a replace (delete + create), which needs the create script again and --allow-replace
    await r.write('lake.yaml', manualLake('/sql/1', lakeAck('create', '/sql/1')).replace('    httpPath: /sql/1\n', '    httpPath: /sql/1\n    catalog: other_catalog\n'));
    r.sandbox.clearRequests();
    const res = await r.run();
    const lake = outcome(res, 'lake');
    // a script would not let it through: it is skipped as blocked by the flag (exit 1), not reported as waiting for a
    // script (before: result blocked, "awaiting manual step", and apply's exit 3)
    expect(lake).toMatchObject({ action: 'replace', result: 'skipped', code: 'GOVOPS_BLOCKED' });
    expect(lake!.error).toMatch(/--allow-replace/);
    expect(lake!.error).not.toMatch(/awaiting manual step/);
    expect(writes()).toEqual([]);
  });

  it('--manual-steps trust: the edit is sent at once', async () => {
    await r.write('lake.yaml', manualLake('/sql/1'));
    expect((await r.run({ manualSteps: 'trust' })).ok).toBe(true);
    await r.write('lake.yaml', manualLake('/sql/2'));
    r.sandbox.clearRequests();
    const res = await r.run({ manualSteps: 'trust' });
    expect(outcome(res, 'lake')).toMatchObject({ action: 'update', result: 'ok' });
    expect(writes().filter((l) => l.startsWith('PUT'))).toHaveLength(2);
  });

  it('sql_analytics: create after initial-create + create (one acknowledgment), delete after the delete script', async () => {
    const manual = (annotations: string) => sqlManifest('sql', 'db.example.com', { autoBootstrap: false, deleteCreds: false, annotations });
    await r.write('sql.yaml', manual('    team: data'));
    const waiting = await r.run();
    expect(waiting.plan!.changes[0]!.manualStep!.scripts.map((s) => s.command)).toEqual([
      'govops scripts sql --phase initial-create m/sql.yaml',
      'govops scripts sql --phase create m/sql.yaml',
    ]);
    expect(outcome(waiting, 'sql')!.result).toBe('blocked');
    expect(writes()).toEqual([]);
    await r.write('sql.yaml', manual(`    govops/manual-step: "${sqlAck('create')}"`));
    expect(outcome(await r.run(), 'sql')).toMatchObject({ action: 'create', result: 'ok' });
    const id = (await r.state()).resources[0]!.id;

    // delete: govops/delete + --prune waits for the delete script
    await r.write('sql.yaml', manual(`    govops/delete: "true"\n    govops/manual-step: "${sqlAck('create')}"`));
    r.sandbox.clearRequests();
    const del = await r.run({ prune: true });
    expect(outcome(del, 'sql')).toMatchObject({ action: 'delete', result: 'blocked' });
    expect(del.plan!.changes[0]!.manualStep!.scripts.map((s) => s.phase)).toEqual(['delete']);
    expect(writes()).toEqual([]);
    await r.write('sql.yaml', manual(`    govops/delete: "true"\n    govops/manual-step: "${sqlAck('delete')}"`));
    const deleted = await r.run({ prune: true });
    expect(outcome(deleted, 'sql')).toMatchObject({ action: 'delete', result: 'ok' });
    expect(r.lines()).toContain(`DELETE /integrations/${id} 200`);
    expect(await r.api.listIntegrations()).toEqual([]);
  });

  it('a failed creation (createError): the fixing PUT waits for the edit script; the plan shows the cleanup path', async () => {
    await r.write('sql.yaml', sqlManifest('sql', 'db.example.com', { autoBootstrap: false, deleteCreds: false, annotations: `    govops/manual-step: "${sqlAck('create')}"` }));
    const res = await fetch(`${r.sandbox.url}/_sandbox/fail-next`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: r.sandbox.adminToken },
      body: JSON.stringify({ operation: 'create' }),
    });
    expect(res.status, await res.text()).toBeLessThan(300);
    const failed = await r.run();
    expect(outcome(failed, 'sql')).toMatchObject({ action: 'create', result: 'failed' });
    r.sandbox.clearRequests();
    const next = await r.run();
    const c = next.plan!.changes[0]!;
    expect(c).toMatchObject({ action: 'update', manualStep: { status: 'awaiting', scripts: [{ phase: 'edit' }] } });
    expect(c.failedCreation!.cleanup.map((s) => s.command)).toEqual([
      'govops scripts sql --phase cleanup m/sql.yaml',
      'govops scripts sql --phase post-cleanup m/sql.yaml',
    ]);
    expect(writes()).toEqual([]);
  });
});

describe('the CLI: plan names the step, apply exits 3, the printed command prints the acknowledgment', () => {
  it('walks the manual flow as a user would, copying what govops prints', async () => {
    const h = await harness();
    const env = { GOVOPS_SECRET_LAKE_TOKEN: 'tok-cli-3333' };
    const govops = (args: string[], extra: Record<string, string> = {}) => h.govops(args, { ...env, ...extra });
    try {
      await mkdir(path.join(h.dir, 'm'));
      const file = path.join(h.dir, 'm', 'lake.yaml');
      await writeFile(file, manualLake('/sql/1'));
      await writeFile(path.join(h.dir, 'm', 'other.yaml'), lakeManifest('other', 'other.example.com'));

      const plan = await govops(['plan', 'm', '--detailed-exitcode']);
      expect(plan.code, plan.stderr).toBe(2);
      expect(plan.stdout).toContain('! awaiting manual step: the manifest has no govops/manual-step annotation');
      const command = plan.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('!   govops scripts'))!.slice(4);
      expect(command).toBe('govops scripts lake --phase create m/lake.yaml');
      const annotation = plan.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('!   govops/manual-step:'))!.slice(4);
      expect(annotation).toBe(`govops/manual-step: "${lakeAck('create', '/sql/1')}"`);

      const apply = await govops(['apply', 'm']);
      expect(apply.code, apply.stderr).toBe(3);
      expect(apply.stderr).toContain('blocked: 1 change awaits a manual step and was not applied (exit 3): Integration/lake');
      expect(apply.stdout).toMatch(/Integration\/lake\s+create\s+blocked/);
      expect(apply.stdout).toContain('Apply incomplete: 1 ok, 0 failed, 0 skipped, 1 awaiting a manual step.');
      expect((await h.client().listIntegrations()).map((i) => i.config.workspaceUrl)).toEqual(['https://other.example.com']);

      // the printed command, run as printed: the script on stdout, the same acknowledgment on stderr
      const script = await govops(command.split(' ').slice(1));
      expect(script.code, script.stderr).toBe(0);
      expect(script.stdout).toContain('CREATE CATALOG');
      expect(script.stderr.split('\n')).toContain(annotation);
      // --ack: only the line, offline (no service URL, no secret)
      const offline = await govops([...command.split(' ').slice(1), '--ack'], { GOVOPS_URL: '', GOVOPS_TOKEN: '', GOVOPS_SECRET_LAKE_TOKEN: '' });
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stdout).toBe(`${annotation}\n`);

      await writeFile(file, manualLake('/sql/1', lakeAck('create', '/sql/1')));
      const done = await govops(['apply', 'm']);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('manual step acknowledged');
      expect((await h.client().listIntegrations())).toHaveLength(2);

      // trust from the environment
      await writeFile(file, manualLake('/sql/9', lakeAck('create', '/sql/1')));
      expect((await govops(['apply', 'm'])).code).toBe(3);
      const trusted = await govops(['apply', 'm'], { GOVOPS_MANUAL_STEPS: 'trust' });
      expect(trusted.code, trusted.stderr).toBe(0);
      const bad = await govops(['apply', 'm', '--manual-steps', 'sometimes']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/Allowed choices are require, trust/);
    } finally {
      await h.close();
    }
  });

  it('manual to automatic (a replace): the delete step the plan names is the live integration\'s, and its command works', async () => {
    const h = await harness();
    const env = { GOVOPS_SECRET_SQL_PASSWORD: 'pw-cli-4444', GOVOPS_SECRET_ADMIN_PASSWORD: 'admin-cli-5555' };
    const govops = (args: string[], extra: Record<string, string> = {}) => h.govops(args, { ...env, ...extra });
    try {
      await mkdir(path.join(h.dir, 'm'));
      const file = path.join(h.dir, 'm', 'sql.yaml');
      await writeFile(file, sqlManifest('sql', 'db.example.com', { autoBootstrap: false, deleteCreds: false, annotations: `    govops/manual-step: "${sqlAck('create')}"` }));
      const created = await govops(['apply', 'm']);
      expect(created.code, created.stderr).toBe(0);
      const id = (await h.client().listIntegrations())[0]!.id;

      // the service is to set the platform up from now on: autoBootstrap is not editable, so a replace, whose
      // delete half removes a manually set-up integration: the delete script first
      await writeFile(file, sqlManifest('sql', 'db.example.com', { autoBootstrap: true, annotations: `    govops/manual-step: "${sqlAck('create')}"` }));
      const plan = await govops(['plan', 'm', '--allow-replace']);
      expect(plan.code, plan.stderr).toBe(0);
      const command = plan.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('!   govops scripts'))!.slice(4);
      expect(command).toBe('govops scripts sql --phase delete m/sql.yaml');
      const annotation = plan.stdout.split('\n').map((l) => l.trim()).find((l) => l.startsWith('!   govops/manual-step:'))!.slice(4);

      h.sandbox.clearRequests();
      const script = await govops(command.split(' ').slice(1));
      expect(script.code, script.stderr).toBe(0);
      expect(requestLines(h.sandbox)).toContain(`POST /integrations/${id}/scripts/delete`);
      expect(script.stderr.split('\n')).toContain(annotation);
      const offline = await govops([...command.split(' ').slice(1), '--ack'], { GOVOPS_URL: '', GOVOPS_TOKEN: '', GOVOPS_SECRET_SQL_PASSWORD: '' });
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stdout).toBe(`${annotation}\n`);

      await writeFile(file, sqlManifest('sql', 'db.example.com', { autoBootstrap: true, annotations: `    ${annotation}` }));
      const replaced = await govops(['apply', 'm', '--allow-replace']);
      expect(replaced.code, replaced.stderr).toBe(0);
      expect(requestLines(h.sandbox)).toContain(`DELETE /integrations/${id}`);
      expect((await h.client().listIntegrations()).map((i) => i.autoBootstrap)).toEqual([true]);
    } finally {
      await h.close();
    }
  });
});
