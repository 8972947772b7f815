/**
 * `govops acknowledge`: after the platform scripts ran, the acknowledgments are written into the manifests (all
 * manual-flow integrations or those named), with comments and layout kept; the tokens are those `govops scripts
 * --ack` prints, so the plan no longer awaits them.
 */
import { chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runGovops } from '../helpers/cli.js';
import { manualSqlManifest } from '../helpers/manifests.js';

const manual = (name: string, comment = '') => `# ${name}: the lakehouse of team ${name}${comment}
apiVersion: govops/v1
kind: Integration
metadata:
  name: ${name} # owned by data-eng
  labels: {team: data}
spec:
  type: lakehouse
  autoBootstrap: false
  config:
    workspaceUrl: https://${name}.example.com   # prod workspace
    httpPath: /sql/1
    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }
`;
const auto = `apiVersion: govops/v1
kind: Integration
metadata:
  name: auto
spec:
  type: lakehouse
  autoBootstrap: true
  config:
    workspaceUrl: https://auto.example.com
    httpPath: /sql/1
    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-ack-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ackOf = async (name: string): Promise<string> => {
  const r = await runGovops(['scripts', name, '--phase', 'create', '--ack', '.'], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
};

describe('govops acknowledge', () => {
  it('writes every manual-flow acknowledgment, keeping comments and layout; scripts --ack agrees', async () => {
    const many = [manual('lake-2'), manual('lake-10'), auto, manual('lake-1')].join('---\n');
    await writeFile(path.join(dir, 'lakes.yaml'), many);
    const r = await runGovops(['acknowledge', '--phase', 'create', '.'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('3 manifests acknowledged for the create phase');
    const after = await readFile(path.join(dir, 'lakes.yaml'), 'utf8');
    // only the added lines differ: comments, flow maps, spacing and the unchanged document stay as written
    const added = after.split('\n').filter((l) => !many.split('\n').includes(l));
    expect(added.filter((l) => l === '  annotations:')).toHaveLength(3);
    expect(added.filter((l) => /^ {4}govops\/manual-step: "create:[0-9a-f]{8}"$/.test(l))).toHaveLength(3);
    expect(added).toHaveLength(6);
    expect(after.split('\n').filter((l) => !added.includes(l))).toEqual(many.split('\n'));
    for (const name of ['lake-1', 'lake-2', 'lake-10']) expect(after).toContain((await ackOf(name)).replace('govops/manual-step: ', ''));
    const valid = await runGovops(['validate', '--strict', '.'], { cwd: dir });
    expect(valid.code, valid.stdout).toBe(0);
    // a second run changes nothing
    const again = await runGovops(['acknowledge', '--phase', 'create', '.'], { cwd: dir });
    expect(again.stderr).toContain('0 manifests acknowledged');
    expect(await readFile(path.join(dir, 'lakes.yaml'), 'utf8')).toBe(after);
  });

  it("keeps the manifest's mode whatever the operator's umask (a group-writable file in a shared checkout stays so)", async () => {
    const file = path.join(dir, 'lake.yaml');
    await writeFile(file, manual('lake-m'));
    await chmod(file, 0o664);
    const r = await runGovops(['acknowledge', '--phase', 'create', '.'], { cwd: dir, umask: 0o077 });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(file, 'utf8')).toMatch(/govops\/manual-step: "create:/);
    expect((await lstat(file)).mode & 0o777).toBe(0o664);
  });

  it('--only names a selection; other phases already acknowledged are kept; --dry-run writes nothing', async () => {
    await writeFile(path.join(dir, 'a.yaml'), manual('lake-a').replace('  labels: {team: data}\n', '  annotations:\n    govops/manual-step: "edit:0badcafe"\n'));
    await writeFile(path.join(dir, 'b.yaml'), manual('lake-b'));
    const before = await readFile(path.join(dir, 'b.yaml'), 'utf8');
    const dry = await runGovops(['acknowledge', '--phase', 'create', '--only', 'lake-a', '--dry-run', '.'], { cwd: dir });
    expect(dry.stdout).toMatch(/^would acknowledge Integration\/lake-a \(edit:0badcafe create:[0-9a-f]{8}\) in a\.yaml$/m);
    expect(await readFile(path.join(dir, 'a.yaml'), 'utf8')).not.toContain('create:');
    const r = await runGovops(['acknowledge', '--phase', 'create', '--only', 'lake-a', '.'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'a.yaml'), 'utf8')).toMatch(/govops\/manual-step: "edit:0badcafe create:[0-9a-f]{8}"/);
    expect(await readFile(path.join(dir, 'b.yaml'), 'utf8')).toBe(before);
    const unknown = await runGovops(['acknowledge', '--phase', 'create', '--only', 'nope', '.'], { cwd: dir });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no Integration named nope');
    // an automatic integration named: skipped, with why in words that say what it is
    await writeFile(path.join(dir, 'auto.yaml'), auto);
    const skipped = await runGovops(['acknowledge', '--phase', 'create', '--only', 'auto', '.'], { cwd: dir });
    expect(skipped.stderr).toContain('skipped Integration/auto: not in the manual flow (its autoBootstrap is not false)');
  });

  it('a phase already acknowledged with its token beside another is left as written (no reordered rewrite, nothing counted)', async () => {
    const file = path.join(dir, 'lake.yaml');
    await writeFile(file, manual('lake-c'));
    for (const phase of ['edit', 'create']) expect((await runGovops(['acknowledge', '--phase', phase, '.'], { cwd: dir })).code).toBe(0);
    const both = await readFile(file, 'utf8');
    expect(both).toMatch(/govops\/manual-step: "edit:[0-9a-f]{8} create:[0-9a-f]{8}"/);
    // the old code rewrote it as "create:… edit:…" and said it acknowledged it: each run of the other phase flipped the
    // order back, a change to commit every time
    const again = await runGovops(['acknowledge', '--phase', 'edit', '.'], { cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('0 manifests acknowledged for the edit phase');
    expect(await readFile(file, 'utf8')).toBe(both);
  });

  it('a step of two scripts is acknowledged after its last: --phase initial-create (then create) and cleanup (then post-cleanup, sql_analytics) write nothing', async () => {
    const sql = manualSqlManifest('GOVOPS_SECRET_SQL_PASSWORD');
    const columnar = `apiVersion: govops/v1
kind: Integration
metadata:
  name: col
spec:
  type: columnar_warehouse
  autoBootstrap: false
  config:
    host: col.example.com
    database: governance
    authenticationType: userPassword
    username: govops_system
    password: { fromEnv: GOVOPS_SECRET_COL_PASSWORD }
`;
    await writeFile(path.join(dir, 'sql.yaml'), sql);
    await writeFile(path.join(dir, 'col.yaml'), columnar);
    // the interface: run initial-create, then the create script, then create; the plan waits for "create:" until both ran
    const first = await runGovops(['acknowledge', '--phase', 'initial-create', '.'], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'sql.yaml'), 'utf8')).toBe(sql);
    expect(await readFile(path.join(dir, 'col.yaml'), 'utf8')).toBe(columnar);
    expect(first.stderr).toContain(
      'not acknowledged yet Integration/sql: its create step ends with the create script: run govops scripts sql --phase create sql.yaml in the platform, then govops acknowledge --phase create',
    );
    expect(first.stderr).toContain('0 manifests acknowledged for the create phase');
    // cleanup of a failed creation: sql_analytics has post-cleanup after it, columnar_warehouse ends with cleanup
    const cleanup = await runGovops(['acknowledge', '--phase', 'cleanup', '.'], { cwd: dir });
    expect(cleanup.code, cleanup.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'sql.yaml'), 'utf8')).toBe(sql);
    expect(await readFile(path.join(dir, 'col.yaml'), 'utf8')).toMatch(/govops\/manual-step: "cleanup:[0-9a-f]{8}"/);
    expect(cleanup.stderr).toContain('not acknowledged yet Integration/sql: its cleanup step ends with the post-cleanup script');
    const post = await runGovops(['acknowledge', '--phase', 'post-cleanup', '.'], { cwd: dir });
    expect(post.code, post.stderr).toBe(0);
    expect(await readFile(path.join(dir, 'sql.yaml'), 'utf8')).toMatch(/govops\/manual-step: "cleanup:[0-9a-f]{8}"/);
    const created = await runGovops(['acknowledge', '--phase', 'create', '.'], { cwd: dir });
    expect(created.stderr).toContain('2 manifests acknowledged for the create phase');
  });

  it('a manifest whose metadata ends in block labels (CRLF): the annotation goes under metadata, validate still passes', async () => {
    const text = manual('lake-c').replace('  labels: {team: data}\n', '  labels:\n    team: data\n').replace(/\n/g, '\r\n');
    await writeFile(path.join(dir, 'c.yaml'), text);
    const r = await runGovops(['acknowledge', '--phase', 'create', '.'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const after = await readFile(path.join(dir, 'c.yaml'), 'utf8');
    const ack = (await ackOf('lake-c')).replace('govops/manual-step: ', '');
    expect(after).toBe(text.replace('    team: data\r\n', `    team: data\r\n  annotations:\r\n    govops/manual-step: ${ack}\r\n`));
    const valid = await runGovops(['validate', '--strict', '.'], { cwd: dir });
    expect(valid.code, valid.stdout).toBe(0);
  });

  it('a manifest that is a symbolic link to a file in the repository: the target is written, the link stays', async () => {
    await mkdir(path.join(dir, 'base'));
    await mkdir(path.join(dir, 'prod'));
    await writeFile(path.join(dir, 'base', 'lake.yaml'), manual('lake-l'));
    await symlink('../base/lake.yaml', path.join(dir, 'prod', 'lake.yaml'));
    const r = await runGovops(['acknowledge', '--phase', 'create', 'prod'], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect((await lstat(path.join(dir, 'prod', 'lake.yaml'))).isSymbolicLink()).toBe(true);
    expect(await readFile(path.join(dir, 'base', 'lake.yaml'), 'utf8')).toMatch(/^ {4}govops\/manual-step: "create:[0-9a-f]{8}"$/m);
    expect((await readdir(path.join(dir, 'base'))).concat(await readdir(path.join(dir, 'prod')))).toEqual(['lake.yaml', 'lake.yaml']);
  });
});
