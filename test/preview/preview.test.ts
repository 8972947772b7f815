/**
 * `govops preview --base main` end to end, as CI runs it: a real git repository (the base commit on main,
 * each pull request a commit on its own branch), the sandbox over HTTP with the base applied, the real CLI,
 * no state file and (unless a test gives them) no secrets. Every scenario of issue #11: add, change,
 * remove, rename, a secret reference change, an invalid head, a failing validation test in the dry run, a
 * manual-flow integration with its scripts, a changed host (no secret sent), drift not caused by the pull
 * request; plus offline (a fork), JSON, an untouched work tree, and no secret value in any output.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runGovops, type CliResult } from '../helpers/cli.js';
import { lakehouseManifest } from '../helpers/manifests.js';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import { git, initRepo } from '../helpers/git.js';

const SECRETS = {
  GOVOPS_SECRET_LAKE_TOKEN: 'lake-SECRET-tok-7171',
  GOVOPS_SECRET_LAKE_TOKEN2: 'lake-SECRET-tok2-7272',
  GOVOPS_SECRET_SQL_PASSWORD: 'sql-SECRET-pw-8181',
  GOVOPS_SECRET_SQL_ADMIN: 'sql-SECRET-admin-8282',
  GOVOPS_SECRET_COL_PASSWORD: 'col-SECRET-pw-9191',
  GOVOPS_SECRET_HOOK: 'hook-SECRET-sig-9292',
};
const NO_SECRETS = Object.fromEntries(Object.keys(SECRETS).map((k) => [k, undefined]));
const MARKER = '<!-- govops-preview -->';

const lake = (name: string, host: string, httpPath = '/sql/1', tokenEnv = 'GOVOPS_SECRET_LAKE_TOKEN') => lakehouseManifest({ name, host, httpPath, tokenEnv });
const sql = (o: { host?: string; port?: number } = {}) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: sql
spec:
  type: sql_analytics
  autoBootstrap: true
  config:
    host: ${o.host ?? 'sql.example.com'}
    database: governance
    schema: secure_views
    username: govops_system
    password: { fromEnv: GOVOPS_SECRET_SQL_PASSWORD }
    port: ${o.port ?? 1433}
  deleteCredentials:
    authenticationType: userPassword
    username: govops_admin
    password: { fromEnv: GOVOPS_SECRET_SQL_ADMIN }
`;
const col = (name: string, o: { port?: number; connectArgs?: string } = {}) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name}
spec:
  type: columnar_warehouse
  autoBootstrap: false
  config:
    host: ${name}.example.com
    database: governance
    authenticationType: userPassword
    username: svc_${name}
    password: { fromEnv: GOVOPS_SECRET_COL_PASSWORD }
    port: ${o.port ?? 5439}
${o.connectArgs ? `    connectArgs: "${o.connectArgs}"\n` : ''}`;
const hook = (name: string) => `apiVersion: govops/v1
kind: Webhook
metadata:
  name: ${name}
spec:
  url: http://127.0.0.1:9/${name}
  global: false
  notificationType: [modelCreated]
  actionType: triggered
  secret: { fromEnv: GOVOPS_SECRET_HOOK }
`;
const OLD = `apiVersion: govops/v1
kind: Integration
metadata:
  name: old
spec:
  type: distributed_sql
`;

describe('govops preview of a pull request', () => {
  let sandbox: SandboxHandle;
  let repo: string;
  let stateDir: string;
  const outputs: string[] = [];
  const live = () => ({ GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken });
  const write = (file: string, text: string) => writeFile(path.join(repo, 'm', file), text);
  /** Run in the repo against main; no secrets and no state file unless given. */
  const preview = async (args: string[], env: Record<string, string | undefined> = {}): Promise<CliResult> => {
    const r = await runGovops(['preview', 'm', '--base', 'main', ...args], {
      cwd: repo,
      env: { GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined, ...NO_SECRETS, ...env },
    });
    outputs.push(r.stdout, r.stderr);
    return r;
  };
  /** A pull request: a branch from main with one commit. */
  const pr = async (name: string, change: () => Promise<void>): Promise<void> => {
    git(repo, 'checkout', '-q', '-B', name, 'main');
    await change();
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', name);
  };
  type Item = { id: string | number; type: string; config: Record<string, unknown> };
  const liveList = (): Item[] => JSON.parse(sandbox.integrations.listJson().toString('utf8')) as Item[];
  const id = (name: string): string => {
    const item = liveList().find((i) => (i.config as { workspaceUrl?: string; host?: string }).host === name || String((i.config as { workspaceUrl?: string }).workspaceUrl).includes(name));
    if (!item) throw new Error(`no live integration for ${name}`);
    return String(item.id);
  };
  const mutations = () => sandbox.requests().filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}${q.query.dryRun ? '?dryRun' : ''}`);
  /** The changes table's data rows. */
  const rows = (md: string): string[] => {
    const start = md.indexOf('#### Changes');
    return md.slice(start).split('\n').filter((l) => l.startsWith('| `'));
  };

  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, transitionMs: 20 });
    repo = await mkdtemp(path.join(tmpdir(), 'govops-pr-'));
    stateDir = await mkdtemp(path.join(tmpdir(), 'govops-pr-state-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'));
    await write('lake.yaml', lake('lake', 'lake.example.com'));
    await write('drifty.yaml', lake('drifty', 'drifty.example.com'));
    await write('sql.yaml', sql());
    await write('col.yaml', col('col'));
    await write('hook.yaml', hook('hook'));
    await write('old.yaml', OLD);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    // the daemon applied the base (its state file is not in CI; its manual-flow scripts ran out of band)
    const applied = await runGovops(['apply', 'm', '--state', path.join(stateDir, 'state.json'), '--manual-steps', 'trust'], { cwd: repo, env: { ...live(), ...SECRETS } });
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(repo, { recursive: true, force: true });
    await rm(stateDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    sandbox.clearRequests();
    sandbox.failures.clear();
  });

  it('a one-field change, no state file, no secrets: exactly one change; the dry run says why it was skipped', async () => {
    await pr('one-field', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/2')));
    const r = await preview([], live());
    expect(r.code, r.stderr).toBe(2);
    const md = r.stdout;
    expect(md.split('\n')[0]).toBe(MARKER);
    expect(md).toContain(`**Base** \`main\` (merge-base \`${git(repo, 'rev-parse', '--short', 'main')}\`)`);
    expect(md).toContain('| **This pull request** | 1 changed |');
    expect(md).toContain('| **Merging it does** | 1 to update · 6 already as wanted |'.replace(' · 6 already as wanted', ''));
    expect(md).toContain('| **Drift** | none: the service matches the base revision |');
    expect(rows(md)).toEqual([
      `| \`~\` | Integration/lake | lakehouse | changed (1 field) | update in place (id ${id('lake.example.com')}, enabled) | ⏭️ skipped |`,
    ]);
    expect(md).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/2"');
    expect(md).toContain('~ config.httpPath: "/sql/1" -> "/sql/2"');
    expect(md).toMatch(/\*\*Dry run\*\*: ⏭️ skipped — secrets not available here \(fromEnv: GOVOPS_SECRET_LAKE_TOKEN\)/);
    expect(md).not.toMatch(/adopt/i);
    // read-only: the two list requests, nothing else
    expect(sandbox.requests().map((q) => `${q.method} ${q.path}`).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
  });

  it('with the secrets: the dry run is sent (PUT ?dryRun=true) and its tests are shown', async () => {
    await pr('one-field', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/2')));
    const r = await preview([], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(2);
    expect(mutations()).toEqual([`PUT /integrations/${id('lake.example.com')}?dryRun`]);
    expect(r.stdout).toContain('| **Dry runs** | 1 ✅ passed |');
    expect(r.stdout).toContain(`**Dry run** \`PUT /integrations/${id('lake.example.com')}?dryRun=true\`: ✅ passed`);
    expect(r.stdout).toContain('| Basic Connection Test | ✅ passed |  |');
    expect(liveList().find((i) => String(i.id) === id('lake.example.com'))!.config.httpPath).toBe('/sql/1');
  });

  it('added: a webhook and an integration; a new integration is dry-run only with --dry-run-new-targets', async () => {
    await pr('add', async () => {
      await write('hook2.yaml', hook('hook2'));
      await write('lake3.yaml', lake('lake3', 'lake3.example.com'));
    });
    const r = await preview([], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toContain('| **This pull request** | 2 added |');
    expect(rows(r.stdout)).toEqual([
      '| `+` | Integration/lake3 | lakehouse | added | create | ⏭️ skipped |',
      '| `+` | Webhook/hook2 |  | added | create |  |',
    ]);
    expect(r.stdout).toContain('new in this pull request: its secrets would go to a host the base revision never used');
    expect(r.stdout).toContain('+ spec.config.workspaceUrl = "https://lake3.example.com"');
    expect(r.stdout).toContain('+ spec.config.token = (secret fromEnv: GOVOPS_SECRET_LAKE_TOKEN)');
    expect(mutations()).toEqual([]);
    const opted = await preview(['--dry-run-new-targets'], { ...live(), ...SECRETS });
    expect(opted.code).toBe(2);
    expect(mutations()).toEqual(['POST /integrations?dryRun']);
    expect(opted.stdout).toContain('| `+` | Integration/lake3 | lakehouse | added | create | ✅ passed |');
    expect(liveList().some((i) => String(i.config.workspaceUrl).includes('lake3'))).toBe(false);
  });

  it('removed: stays in the service without --prune; with --prune a delete, warned on top, dry-run with DELETE', async () => {
    await pr('remove', () => rm(path.join(repo, 'm', 'old.yaml')));
    const kept = await preview([], live());
    expect(kept.code).toBe(0);
    const keptId = String(liveList().find((i) => i.type === 'distributed_sql')!.id);
    expect(rows(kept.stdout)).toEqual([`| \`-\` | Integration/old | distributed_sql | removed | nothing (id ${keptId}, enabled) |  |`]);
    expect(kept.stdout).toContain('- ℹ️ **Integration/old**: removed from the manifests, but stays in the service: run with --prune to delete it');
    const pruned = await preview(['--prune'], live());
    expect(pruned.code, pruned.stderr).toBe(2);
    const oldId = String(liveList().find((i) => i.type === 'distributed_sql')!.id);
    expect(pruned.stdout).toContain('- 🗑️ **Integration/old**: will be deleted from the service');
    expect(pruned.stdout.indexOf('#### Warnings')).toBeLessThan(pruned.stdout.indexOf('#### Changes'));
    expect(rows(pruned.stdout)).toEqual([`| \`-\` | Integration/old | distributed_sql | removed | delete (id ${oldId}, enabled) | ✅ passed |`]);
    expect(mutations()).toEqual([`DELETE /integrations/${oldId}?dryRun`]);
  });

  it('a blocked prune (autoBootstrap true needs deleteCredentials) and the mass-deletion guard: warned on top, counted as blocked', async () => {
    await pr('blocked', () => rm(path.join(repo, 'm', 'sql.yaml')));
    const one = await preview(['--prune'], live());
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('| **Merging it does** | 1 ⛔ blocked |');
    expect(one.stdout).toMatch(/- ⛔ \*\*Integration\/sql\*\*: delete blocked: cannot prune: a sql_analytics integration created with autoBootstrap true is deleted with admin credentials \(spec\.deleteCredentials\)/);
    expect(rows(one.stdout)[0]).toMatch(/^\| `-` \| Integration\/sql \| sql_analytics \| removed \| \*\*blocked\*\*: delete \(id \d+, enabled\) \| ⏭️ skipped \|$/);
    expect(mutations()).toEqual([]);
    await pr('mass', async () => {
      for (const f of ['old.yaml', 'drifty.yaml', 'hook.yaml']) await rm(path.join(repo, 'm', f));
    });
    const mass = await preview(['--prune'], live());
    expect(mass.code, mass.stderr).toBe(0);
    expect(mass.stdout).toContain('| **Merging it does** | 3 ⛔ blocked |');
    expect(mass.stdout).toMatch(/#### Warnings\n\n- ⛔ deletes held back by the mass-deletion guard: the plan deletes 3 of 6 managed resources/);
    const warnings = mass.stdout.slice(mass.stdout.indexOf('#### Warnings'), mass.stdout.indexOf('#### Changes'));
    expect(warnings.match(/mass-deletion guard/g)).toHaveLength(1); // one warning, not one per resource
    expect(mutations()).toEqual([]);
  });

  it('renamed (same identity): a rename, nothing changes in the service', async () => {
    await pr('rename', async () => {
      await rm(path.join(repo, 'm', 'lake.yaml'));
      await write('lake-renamed.yaml', lake('lake-main', 'lake.example.com'));
    });
    const r = await preview([], live());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('| **This pull request** | 1 renamed |');
    expect(rows(r.stdout)).toEqual([
      `| \`~\` | Integration/lake-main | lakehouse | renamed from lake | nothing: the service already matches (id ${id('lake.example.com')}, enabled) |  |`,
    ]);
    expect(r.stdout).toContain(`- renamed from Integration/lake (live id ${id('lake.example.com')})`);
    expect(r.stdout).toContain('**Merging changes nothing in the service** (exit 0)');
  });

  it('a secret reference change: shown by name; an update; never dry-run to send the other secret', async () => {
    await pr('secret-ref', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/1', 'GOVOPS_SECRET_LAKE_TOKEN2')));
    const r = await preview([], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toContain('~ spec.config.token: (secret fromEnv: GOVOPS_SECRET_LAKE_TOKEN) -> (secret fromEnv: GOVOPS_SECRET_LAKE_TOKEN2)');
    expect(r.stdout).toContain('~ config.token = (sensitive)');
    expect(rows(r.stdout)[0]).toMatch(/\| Integration\/lake \| lakehouse \| changed \(1 field\) \| update in place .* \| ⏭️ skipped \|/);
    expect(r.stdout).toContain('fromEnv: GOVOPS_SECRET_LAKE_TOKEN2 is not used by this resource in the base revision: it is not sent to its host');
    expect(mutations()).toEqual([]);
  });

  it('an invalid head: the comment says why (file:line:col), exit 1, the service is not asked', async () => {
    await pr('invalid', () => write('bad.yaml', lake('bad', 'bad.example.com').replace('httpPath', 'httpPth')));
    const r = await preview([], live());
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(MARKER);
    expect(r.stdout).toContain('**Validation failed:**');
    expect(r.stdout).toMatch(/#### Validation failed\n\n```text\nm\/bad\.yaml:\d+:\d+: Integration\/bad: /);
    expect(r.stdout).toContain('_No plan was made._');
    expect(r.stderr).toMatch(/error: invalid manifests/);
    expect(sandbox.requests()).toEqual([]);
  });

  it('a dry run failing a validation test: a red row, the warning on top, the details open, exit 1', async () => {
    await pr('failing', () => write('sql.yaml', sql({ port: 1434 })));
    sandbox.failures.tests.push({ name: 'Initial Validation: Basic Connection Test', status: 'failed', operation: 'edit', match: 'sql.example.com' });
    const r = await preview([], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(1);
    const sqlId = id('sql.example.com');
    expect(mutations()).toEqual([`PUT /integrations/${sqlId}?dryRun`]);
    const md = r.stdout;
    expect(md).toContain('| **Dry runs** | 1 ❌ failed |');
    expect(md).toContain('❌ **Needs attention** (exit 1)');
    expect(md).toContain('#### Warnings\n\n- ❌ **Integration/sql**: the dry run failed: Initial Validation: Basic Connection Test');
    expect(rows(md)[0]).toBe(`| \`~\` | Integration/sql | sql_analytics | changed (1 field) | update in place (id ${sqlId}, enabled) | ❌ failed |`);
    expect(md).toContain('<details open><summary><b>Integration/sql</b>');
    expect(md).toContain('| Initial Validation: Basic Connection Test | ❌ failed | Initial Validation: Basic Connection Test failed (sandbox rule) |');
    expect(md).toMatch(/\| Validate Automatic Bootstrap User Grants \| (✅ passed|⏭️ skipped) \|/);
    expect(r.stderr).toMatch(/error: Integration\/sql: the dry run failed/);
  });

  it('manual flow: the scripts to run (initial-create + create, edit) as content, with secret placeholders', async () => {
    await pr('manual', async () => {
      await write('col2.yaml', col('col2'));
      await write('col.yaml', col('col', { port: 5440 }));
    });
    const r = await preview([], { ...live(), ...SECRETS });
    // not acknowledged yet: merging changes nothing in the service (the daemon waits), and the comment says so
    expect(r.code, r.stderr).toBe(0);
    const md = r.stdout;
    expect(md).toContain('⏸️ awaiting a manual step');
    expect(md).toContain('- ⏸️ **Integration/col2**: waits for its manual step (the manifest has no govops/manual-step annotation)');
    expect(md).toContain('⏸️ **Awaiting the manual step** (the manifest has no govops/manual-step annotation)');
    expect(md).toMatch(/Once they ran, add under `metadata.annotations` in `m\/col2.yaml`:\n\n```yaml\ngovops\/manual-step: "create:[0-9a-f]{8}"\n```/);
    expect(md).toMatch(/```yaml\ngovops\/manual-step: "edit:[0-9a-f]{8}"\n```/);
    const colId = id('col.example.com');
    expect(sandbox.requests().filter((q) => q.path.includes('/scripts/')).map((q) => `${q.method} ${q.path}`).sort()).toEqual([
      `POST /integrations/${colId}/scripts/edit`,
      'POST /integrations/scripts/create',
      'POST /integrations/scripts/initial-create',
    ]);
    expect(md).toContain('| **Manual steps** | 3 scripts to run in the platform; ⏸️ 2 changes not applied until their manifests acknowledge the scripts |');
    expect(md).toContain('<details><summary>Manual step: <code>initial-create</code> script for Integration/col2</summary>');
    expect(md).toContain('<details><summary>Manual step: <code>create</code> script for Integration/col2</summary>');
    expect(md).toContain('<details><summary>Manual step: <code>edit</code> script for Integration/col</summary>');
    expect(md).toMatch(/```sql\n-- govops sandbox: initial-create script for a columnar_warehouse integration\n/);
    expect(md).toContain('CREATE USER "svc_col2"');
    expect(md).toContain('The real script: `govops scripts col2 --phase initial-create m/col2.yaml`');
    expect(md.indexOf('initial-create</code> script for Integration/col2')).toBeLessThan(md.indexOf('<code>create</code> script for Integration/col2'));

    // the acknowledgments the comment shows, committed: merging applies both (exit 2), acknowledged in the comment
    const ack = (file: string) => /govops\/manual-step: "[a-z]+:[0-9a-f]{8}"/.exec(md.slice(md.indexOf(`in \`m/${file}\``)))![0];
    const annotate = (text: string, line: string) => text.replace(/^( {2}name: .*)$/m, `$1\n  annotations:\n    ${line}`);
    const col2Ack = ack('col2.yaml');
    const colAck = ack('col.yaml');
    await pr('manual-acked', async () => {
      await write('col2.yaml', annotate(col('col2'), col2Ack));
      await write('col.yaml', annotate(col('col', { port: 5440 }), colAck));
    });
    const acked = await preview([], { ...live(), ...SECRETS });
    expect(acked.code, acked.stderr).toBe(2);
    // the pull request itself writes the acknowledgment: the comment says so, not that the scripts ran (anyone who
    // can edit the manifest can write the line; it records, it does not prove)
    expect(acked.stdout).toContain(`✅ **Acknowledged by this pull request** (\`${col2Ack}\`)`);
    expect(acked.stdout).toContain(`✅ **Acknowledged by this pull request** (\`${colAck}\`)`);
    expect(acked.stdout).toContain('it records that the scripts ran, it does not prove it');
    expect(acked.stdout).not.toContain('the scripts ran, merging applies the change');
    expect(acked.stdout).not.toContain('⏸️');
    const json = await preview(['-o', 'json'], { ...live(), ...SECRETS });
    const acks = (JSON.parse(json.stdout) as { resources: Array<{ name: string; manualAck?: { status: string; fromPullRequest?: boolean } }> }).resources
      .filter((x) => x.manualAck).map((x) => [x.name, x.manualAck!.status, x.manualAck!.fromPullRequest]).sort();
    expect(acks).toEqual([['col', 'acknowledged', true], ['col2', 'acknowledged', true]]);
  });

  it('manual flow, a credential rotation acknowledged by the create entry: applied on merge, no script listed to run', async () => {
    const created = `create:${manualStepToken('create', 'columnar_warehouse', { host: 'col.example.com', database: 'governance', authenticationType: 'userPassword', username: 'svc_col', password: { fromEnv: 'X' }, port: 5439 })}`;
    await pr('rotate', async () => {
      const text = col('col').replace('GOVOPS_SECRET_COL_PASSWORD', 'GOVOPS_SECRET_COL_PASSWORD_NEXT');
      await write('col.yaml', text.replace(/^( {2}name: .*)$/m, `$1\n  annotations:\n    govops/manual-step: "${created}"`));
    });
    const r = await preview(['-o', 'json'], { ...live(), ...SECRETS, GOVOPS_SECRET_COL_PASSWORD_NEXT: 'col-SECRET-next-9393' });
    const c = (JSON.parse(r.stdout) as { resources: Array<{ name: string; live?: { action: string }; manualSteps?: unknown[]; manualAck?: { status: string } }> }).resources.find((x) => x.name === 'col')!;
    expect(c.live?.action, r.stderr).toBe('update');
    expect(c.manualAck?.status).toBe('acknowledged');
    // (it listed the edit script, "run this script in the platform before the change is applied", beside "acknowledged")
    expect(c.manualSteps ?? []).toEqual([]);
    expect(sandbox.requests().filter((q) => q.path.includes('/scripts/'))).toEqual([]);
  });

  it('--no-dry-run and --no-scripts: only the two list requests', async () => {
    await pr('manual', async () => {
      await write('col2.yaml', col('col2'));
      await write('col.yaml', col('col', { port: 5440 }));
    });
    const r = await preview(['--no-dry-run', '--no-scripts', '--manual-steps', 'trust'], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(2);
    expect(sandbox.requests().map((q) => `${q.method} ${q.path}`).sort()).toEqual(['GET /integrations', 'GET /webhooks']);
    expect(r.stdout).toContain('| **Dry runs** | 2 ⏭️ skipped |');
    expect(r.stdout).toContain('**Dry run**: ⏭️ skipped — not sent (--no-dry-run)');
    expect(r.stdout).not.toContain('Manual step');
  });

  it('a changed host or connection string: no secret is sent to it', async () => {
    await pr('host', async () => {
      await write('sql.yaml', sql({ host: 'sql-new.example.net' }));
      await write('col.yaml', col('col', { connectArgs: 'Server=evil.example.net' }));
    });
    // the manual-flow edit is trusted, so its request is considered (and refused to the new host)
    const r = await preview(['--allow-replace', '--manual-steps', 'trust'], { ...live(), ...SECRETS });
    const sqlId = id('sql.example.com');
    const colId = id('col.example.com');
    expect(r.code, r.stderr).toBe(2);
    // the replace's delete half goes to the live (base) host with the delete credentials; nothing to the new host
    const sent = mutations().filter((m) => !m.includes('/scripts/'));
    expect(sent).toEqual([`DELETE /integrations/${sqlId}?dryRun`]);
    expect(sent.some((m) => m.startsWith('POST /integrations') || m.startsWith(`PUT /integrations/${colId}`))).toBe(false);
    expect(r.stdout).toContain('- 🔁 **Integration/sql**: will be replaced (deleted, then created): config.host cannot be changed in place');
    expect(r.stdout).toContain('~ config.host: "sql.example.com" -> "sql-new.example.net"   # forces replacement');
    expect(r.stdout).toContain('**Dry run**: ⏭️ skipped — config.connectArgs differs from the base revision: no secret is sent to a new host');
  });

  it('a host written in another case beside a real change: an update whose dry run sends the host as the service holds it (as apply does)', async () => {
    await pr('host-case', () => write('sql.yaml', sql({ host: 'SQL.Example.com', port: 1500 })));
    const r = await preview([], { ...live(), ...SECRETS });
    expect(r.code, r.stdout + r.stderr).toBe(2);
    const sqlId = id('sql.example.com');
    expect(mutations()).toEqual([`PUT /integrations/${sqlId}?dryRun`]);
    expect(r.stdout).toContain(`**Dry run** \`PUT /integrations/${sqlId}?dryRun=true\`: ✅ passed`);
  });

  it('drift the pull request does not cause: listed separately, collapsed; not a change of this pull request', async () => {
    const driftyId = id('drifty.example.com');
    const res = await request(`${sandbox.url}/integrations/${driftyId}`, {
      method: 'PUT',
      headers: { authorization: sandbox.adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'lakehouse', autoBootstrap: true, config: { workspaceUrl: 'https://drifty.example.com', httpPath: '/sql/by-hand', token: SECRETS.GOVOPS_SECRET_LAKE_TOKEN } }),
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    sandbox.finishTransitions();
    try {
      await pr('drift', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/2')));
      const r = await preview([], live());
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toContain('| **Drift** | 1 resource differs from the base revision');
      expect(rows(r.stdout).map((l) => l.split(' | ')[1])).toEqual(['Integration/lake']);
      expect(r.stdout).toContain(
        `<details><summary>Drift: 1 resource in the service differs from the base revision (not caused by this pull request; merging applies it too)</summary>\n\n\`\`\`diff\n~ Integration/drifty: update in place (id ${driftyId})\n    ~ config.httpPath: "/sql/by-hand" -> "/sql/1"`,
      );
    } finally {
      git(repo, 'checkout', '-q', 'main');
      const repaired = await runGovops(['apply', 'm', '--state', path.join(stateDir, 'state.json')], { cwd: repo, env: { ...live(), ...SECRETS } });
      expect(repaired.code, repaired.stderr).toBe(0);
    }
  });

  it('offline (a pull request from a fork): nothing sent to the service, the reason shown, the manual steps named', async () => {
    await pr('fork', () => write('col2.yaml', col('col2')));
    const r = await preview(['--offline', 'pull request from the fork someone/gov'], { ...live(), ...SECRETS });
    expect(r.code, r.stderr).toBe(2);
    expect(sandbox.requests()).toEqual([]);
    expect(r.stdout).toContain('**Compared with** manifests only (offline)');
    expect(r.stdout).toContain('> **Live state was not consulted:** pull request from the fork someone/gov.');
    expect(r.stdout).toContain('| **Merging it does** | not known: the service was not consulted |');
    expect(r.stdout).toContain('| **Dry runs** | ⏭️ not sent: the service was not consulted |');
    expect(rows(r.stdout)).toEqual(['| `+` | Integration/col2 | columnar_warehouse | added |']);
    // a verdict on the manifests, not a live fact it cannot know
    expect(r.stdout).toContain('**This pull request changes the manifests**: what merging does in the service is not known (exit 2)');
    expect(r.stdout).not.toContain('Merging changes the service');
    expect(r.stdout).toContain('Not fetched: the service was not consulted. Fetch it with `govops scripts col2 --phase initial-create`.');
    expect(r.stderr).not.toMatch(/warning: live state not consulted/);
    // the acknowledgment needs no service either: the same line `govops scripts --ack` prints, offline
    const ack = await runGovops(['scripts', 'col2', '--phase', 'create', 'm', '--ack'], { cwd: repo, env: { GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined } });
    expect(ack.code, ack.stderr).toBe(0);
    expect(r.stdout).toContain('⏸️ **Awaiting the manual step** (the manifest has no govops/manual-step annotation)');
    expect(r.stdout).toContain(`\`\`\`yaml\n${ack.stdout.trim()}\n\`\`\``);
  });

  it('offline, a removed manual-flow integration: no delete script to run without --prune (merging deletes nothing)', async () => {
    await pr('fork-remove', () => rm(path.join(repo, 'm', 'col.yaml')));
    const kept = await preview(['--offline', 'pull request from the fork someone/gov', '-o', 'json']);
    const k = JSON.parse(kept.stdout) as { exitCode: number; summary: { awaitingManualStep?: number; manualSteps: number }; warnings: Array<{ kind: string }>; resources: Array<{ name: string; change: string; manualSteps?: unknown[]; manualAck?: unknown }> };
    expect(k.resources.map((r) => [r.name, r.change, r.manualSteps, r.manualAck])).toEqual([['col', 'removed', undefined, undefined]]);
    expect(k.summary.awaitingManualStep).toBeUndefined();
    expect(k.summary.manualSteps).toBe(0);
    expect(k.warnings.map((w) => w.kind)).not.toContain('manual-step');
    // and merging changes nothing (as live: exit 0, "stays in the service"), which the manifests alone show
    expect(kept.code, kept.stderr).toBe(0);
    expect(k.exitCode).toBe(0);
    // with --prune, merging deletes it: the delete script is the step, and nothing can acknowledge it
    const pruned = await preview(['--offline', 'pull request from the fork someone/gov', '--prune', '-o', 'json']);
    const p = JSON.parse(pruned.stdout) as typeof k;
    expect(p.resources.map((r) => [r.name, (r.manualSteps as Array<{ phase: string }> | undefined)?.map((x) => x.phase)])).toEqual([['col', ['delete']]]);
    expect(p.summary.awaitingManualStep).toBe(1);
    expect(pruned.code).toBe(2);
    expect(sandbox.requests()).toEqual([]);
  });

  it('-o json: the versioned shape, with the markdown; --out writes a file', async () => {
    await pr('one-field', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/2')));
    const out = path.join(stateDir, 'preview.json');
    const r = await preview(['-o', 'json', '--out', out], live());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const doc = JSON.parse(await readFile(out, 'utf8')) as Record<string, unknown> & { resources: Array<Record<string, unknown>> };
    outputs.push(JSON.stringify(doc));
    expect(doc).toMatchObject({ formatVersion: 2, marker: MARKER, mode: 'live', valid: true, changed: true, exitCode: 2 });
    expect(Object.keys(doc).sort()).toEqual(
      ['base', 'changed', 'diagnostics', 'drift', 'exitCode', 'formatVersion', 'markdown', 'marker', 'mode', 'resources', 'revision', 'summary', 'unknownSecrets', 'valid', 'warnings'].sort(),
    );
    expect(doc.summary).toMatchObject({ pr: { added: 0, changed: 1, renamed: 0, removed: 0 }, live: { update: 1 }, dryRuns: { skipped: 1 }, drift: 0, manualSteps: 0 });
    expect(doc.resources).toHaveLength(1);
    expect(doc.resources[0]).toMatchObject({
      resourceKind: 'Integration',
      name: 'lake',
      change: 'changed',
      fields: [{ path: 'spec.config.httpPath', before: '/sql/1', after: '/sql/2', sensitive: false }],
      live: { action: 'update', id: id('lake.example.com'), status: 'enabled', changes: [{ path: 'config.httpPath', fromPr: true }] },
      dryRun: { status: 'skipped' },
    });
    expect(String(doc.markdown).startsWith(MARKER)).toBe(true);
  });

  it('reads commits, never the work tree: an uncommitted change is reported, not previewed, and left as it is', async () => {
    await pr('dirty', () => write('lake.yaml', lake('lake', 'lake.example.com', '/sql/2')));
    await write('lake.yaml', lake('lake', 'lake.example.com', '/sql/uncommitted'));
    const before = git(repo, 'status', '--porcelain');
    const r = await preview([]);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('~ spec.config.httpPath: "/sql/1" -> "/sql/2"');
    expect(r.stdout).not.toContain('/sql/uncommitted');
    expect(r.stdout).toContain('1 manifest file has uncommitted changes, which are not previewed (the preview reads commits): m/lake.yaml');
    expect(git(repo, 'status', '--porcelain')).toBe(before);
    expect(await readFile(path.join(repo, 'm', 'lake.yaml'), 'utf8')).toContain('/sql/uncommitted');
    git(repo, 'checkout', '-q', '--', '.');
  });

  it('an unknown base ref is an error (exit 1) explained in the comment', async () => {
    const r = await runGovops(['preview', 'm', '--base', 'no-such-branch'], { cwd: repo, env: { GOVOPS_URL: undefined } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(MARKER);
    expect(r.stdout).toMatch(/\*\*Preview failed:\*\* --base: unknown revision "no-such-branch"/);
  });

  it('no secret value in any output', () => {
    const all = outputs.join('\n');
    expect(all.length).toBeGreaterThan(5000);
    for (const v of Object.values(SECRETS)) expect(all).not.toContain(v);
    expect(all).not.toContain('-SECRET-');
  });
});

describe('govops preview without --base', () => {
  it('outside a git work tree: offline, resources listed, exit 0; --base is an error', async () => {
    const plain = await mkdtemp(path.join(tmpdir(), 'govops-preview-plain-'));
    try {
      await writeFile(path.join(plain, 'hook.yaml'), hook('solo'));
      const r = await runGovops(['preview'], { cwd: plain, env: { GOVOPS_URL: undefined } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('**Revision** (not a git work tree)');
      expect(r.stdout).toContain('| ` ` | Webhook/solo |  |');
      expect(r.stdout).toContain('Only the manifests were checked (pass --base REF to compare with the base revision).');
      const b = await runGovops(['preview', '--base', 'main'], { cwd: plain, env: { GOVOPS_URL: undefined } });
      expect(b.code).toBe(1);
      expect(b.stdout).toContain('--base needs a git work tree');
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });

  it('a stream (-) is refused with what to run instead: preview reads both revisions from Git objects and renders nothing', async () => {
    // docs/environments.md: a pull request of an overlay layout is planned per environment. `preview -` read a folder
    // named "-" in Git objects and wrote a comment saying the manifests were invalid ("-:1:1: no such file or folder").
    const plain = await mkdtemp(path.join(tmpdir(), 'govops-preview-stream-'));
    try {
      initRepo(plain);
      await writeFile(path.join(plain, 'hook.yaml'), hook('solo'));
      git(plain, 'add', '-A');
      git(plain, 'commit', '-q', '-m', 'base');
      const r = await runGovops(['preview', '--base', 'HEAD', '-'], { cwd: plain, env: { GOVOPS_URL: undefined }, input: hook('solo') });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('govops preview cannot read a stream (-)');
      expect(r.stderr).toContain('govops plan - -o markdown');
    } finally {
      await rm(plain, { recursive: true, force: true });
    }
  });
});
