/**
 * `govops state list|show|forget|adopt|migrate` as an operator meets them: the real CLI on real state files (the
 * PostgreSQL backend's cases are in test/postgres/state.test.ts, the sandbox flows in test/operator/controls.test.ts).
 */
import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { harness, type Harness } from '../apply/harness.js';
import { dataSourceManifest, lakehouseManifest, objectStoreManifest } from '../helpers/manifests.js';
import { webhook } from '../daemon/helpers.js';
import { loadState, newState, saveState } from '../../src/state/store.js';
import type { ManagedResource } from '../../src/state/types.js';
import { CLI, runGovops, type CliResult } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) {
    await chmod(d, 0o755).catch(() => undefined);
    await rm(d, { recursive: true, force: true });
  }
});

async function tmp(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'govops-state-cli-'));
  dirs.push(d);
  return d;
}

function entry(name: string, extra: Partial<ManagedResource> = {}): ManagedResource {
  return { kind: 'Integration', name, id: '7', type: 'lakehouse', origin: 'created', specHash: 'h', secretFingerprints: {}, updatedAt: new Date(0).toISOString(), ...extra };
}

/** The CLI as a user who cannot write `dir` (as root: as nobody, who root's permissions do not cover). */
function asReader(args: string[], cwd: string): Promise<CliResult> {
  const root = process.getuid?.() === 0;
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' }, ...(root ? { uid: 65534, gid: 65534 } : {}) }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the state lock where the state folder cannot be written', () => {
  it('is an error naming the state and its folder, with what to do; not a bare EACCES on a temporary file', async () => {
    const home = await tmp();
    await chmod(home, 0o755);
    const ro = path.join(home, 'ro');
    await mkdir(ro);
    const file = path.join(ro, 'state.json');
    await saveState(file, { ...newState(), resources: [entry('lake')] });
    await chmod(file, 0o644);
    await chmod(ro, 0o555);
    const res = await asReader(['state', 'list', '--state', file], home);
    expect(res.code).toBe(1);
    // the old code: "error: EACCES: permission denied, open '.../state.json.lock.1234.0a1b2c3d.tmp'"
    expect(res.stderr).not.toMatch(/\.tmp'/);
    expect(res.stderr).toContain(`cannot take the lock of the govops state ${file}`);
    expect(res.stderr).toContain(ro);
    expect(res.stderr).toMatch(/hint: .*--state/);
  });
});


describe('state adopt of a data source', () => {
  let h: Harness;
  let theirs: { integration: string; dataSource: string };
  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(path.join(h.dir, 'manifests'));
    // another team's object_store integration and its data source, made by hand
    const post = async (route: string, body: unknown): Promise<any> => {
      const r = await fetch(`${h.sandbox.url}${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: h.sandbox.adminToken },
        body: JSON.stringify(body),
      });
      expect(r.status, await r.clone().text()).toBeLessThan(300);
      return r.json();
    };
    const team = await post('/integrations', {
      type: 'object_store',
      autoBootstrap: false,
      config: { name: 'team-raw', cloudAccountId: '123456789012', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::123456789012:role/team', cloudLocationPath: 's3://shared.example.com/', authenticationType: 'auto' },
    });
    for (;;) {
      const st = (await (await fetch(`${h.sandbox.url}/integrations/${team.id}/status`, { headers: { authorization: h.sandbox.adminToken } })).json()) as { status: string };
      if (st.status === 'enabled') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const [created] = await post('/native-s3/handler', { type: 'object_store', integrationId: Number(team.id), dataSources: [{ dataSourceName: 'events', prefix: 's3://shared.example.com/mine/events/' }] });
    theirs = { integration: String(team.id), dataSource: String(created.dataSourceId) };
    // the manifests: an integration of ours (not created yet) and a data source under it with the same prefix
    await h.writeManifest('mine.yaml', objectStoreManifest('mine', 's3://shared.example.com/mine/'));
    await h.writeManifest('events.yaml', dataSourceManifest('events', 'mine', 's3://shared.example.com/mine/events/'));
  });
  afterAll(async () => {
    await h?.close();
  });

  it("is refused while the state records no live id for the manifest's integration: the data source cannot be checked against it", async () => {
    // The old code recorded another team's data source (under their integration) for DataSource/events: the next plan
    // showed it "adopted and replaced", and an apply with --allow-replace deleted it to create ours.
    const res = await h.govops(['state', 'adopt', 'DataSource/events', 'manifests', '--id', theirs.dataSource]);
    expect(res.code, res.stdout).toBe(1);
    expect(res.stderr).toContain(`Integration/mine, the integration of DataSource/events, is not recorded in .govops/state.json: data source ${theirs.dataSource} cannot be checked against it`);
    expect(res.stderr).toMatch(/hint: record the integration first \(govops state adopt Integration\/mine --id ID, or govops apply\)/);
    expect(existsSync(h.statePath) ? (await h.state()).resources : []).toEqual([]);
  });

  it('once the integration is recorded, a data source under another integration is refused (the check the docs name)', async () => {
    const applied = await h.govops(['apply', 'manifests', '--only', 'Integration/mine']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
    const mineId = (await h.state()).resources.find((r) => r.name === 'mine')!.id;
    const res = await h.govops(['state', 'adopt', 'DataSource/events', 'manifests', '--id', theirs.dataSource]);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`data source ${theirs.dataSource} is registered under integration ${theirs.integration}, the manifest's Integration/mine is id ${mineId}`);
  });
});

describe('state adopt of a data source the service keeps marked deleted', () => {
  it('is refused as not live (the list leaves it out): it was recorded, and the next plan created another', async () => {
    const h = await harness({ transitionMs: 20 });
    try {
      await mkdir(path.join(h.dir, 'manifests'));
      await h.writeManifest('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/'));
      await h.writeManifest('events.yaml', dataSourceManifest('events', 'raw', 's3://raw.example.com/events/'));
      const applied = await h.govops(['apply', 'manifests']);
      expect(applied.code, applied.stderr + applied.stdout).toBe(0);
      const id = (await h.state()).resources.find((r) => r.kind === 'DataSource')!.id;
      expect((await h.govops(['state', 'forget', 'DataSource/events'])).code).toBe(0);
      // deleted out of band: the sandbox, as the vendor's handler, first marks it deleted (GET by id still answers it)
      const del = await fetch(`${h.sandbox.url}/dataSource/${id}`, { method: 'DELETE', headers: { authorization: h.sandbox.adminToken } });
      expect(del.status).toBeLessThan(300);
      const res = await h.govops(['state', 'adopt', 'DataSource/events', 'manifests', '--id', id]);
      expect(res.code, res.stdout).toBe(1);
      expect(res.stderr).toContain(`no data source with id ${id} in the service`);
      // the hint names the path data sources are listed at (the interface's, unless --data-sources-path says another)
      expect(res.stderr).toContain('GET /native-s3/handler (or the --data-sources-path given)');
      expect((await h.state()).resources.filter((r) => r.kind === 'DataSource')).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe('state forget of an object_store integration whose data sources govops manages', () => {
  it('says they are still managed (the next apply --prune deletes them once their manifests go), and how to leave them too', async () => {
    const home = await tmp();
    const file = path.join(home, 'state.json');
    const ds = (name: string, integrationId: string): ManagedResource =>
      entry(name, { kind: 'DataSource', type: undefined, id: name === 'events' ? '3' : '4', identity: `${integrationId}|s3://b.example.com/${name}/` });
    for (const output of [[], ['-o', 'json']]) {
      await saveState(file, { ...newState(), resources: [entry('raw', { id: '11', type: 'object_store' }), ds('events', '11'), ds('elsewhere', '5')] });
      const res = await runGovops(['state', 'forget', 'Integration/raw', '--state', file, ...output], { cwd: home });
      expect(res.code, res.stderr).toBe(0);
      // the old code said only "without one it is left alone (never pruned)": handing the integration over (its manifest
      // and its data sources' removed), the next apply --prune deleted the data sources under it
      expect(res.stderr).toContain('warning: DataSource/events (under it) is still managed by govops');
      expect(res.stderr).toContain('govops state forget DataSource/events');
      expect(res.stderr).not.toContain('elsewhere');
      expect((await loadState(file)).resources.map((r) => `${r.kind}/${r.name}`).sort()).toEqual(['DataSource/elsewhere', 'DataSource/events']);
    }
  });
});

describe('state forget where adoption is left to the operator (GOVOPS_NO_ADOPT)', () => {
  it('does not say the next plan adopts it: a plan with --no-adopt blocks it until state adopt records it', async () => {
    const home = await tmp();
    const file = path.join(home, 'state.json');
    for (const [env, says] of [[{}, 'The next plan adopts it if a manifest matches it'], [{ GOVOPS_NO_ADOPT: 'true' }, 'The next plan blocks it if a manifest matches it (GOVOPS_NO_ADOPT)']] as const) {
      await saveState(file, { ...newState(), resources: [entry('lake')] });
      const res = await runGovops(['state', 'forget', 'lake', '--state', file], { cwd: home, env });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain(says);
    }
  });
});

describe('state migrate --to a folder', () => {
  it('is refused as a folder (give the file), not as a folder that "already holds a state", nor a bare EISDIR with --force', async () => {
    const home = await tmp();
    await saveState(path.join(home, 'state.json'), { ...newState(), resources: [entry('lake')] });
    await mkdir(path.join(home, 'backup'));
    for (const force of [[], ['--force']]) {
      const res = await runGovops(['state', 'migrate', '--state', 'state.json', '--to', 'backup', ...force], { cwd: home });
      expect(res.code).toBe(1);
      // the old code: "the target backup already holds a state", and with --force "EISDIR: illegal operation on a
      // directory, rename '.../.backup.1234.0a1b2c3d4e5f.tmp' -> 'backup'"
      expect(res.stderr).toContain('--to backup is a folder');
      expect(res.stderr).toMatch(/hint: .*backup\/state\.json/);
    }
  });
});

describe('state migrate --to URL#key --to-key another', () => {
  it('is refused before anything is read or locked: two keys on one command line (the --to-key won silently)', async () => {
    const home = await tmp();
    await saveState(path.join(home, 'state.json'), { ...newState(), resources: [entry('lake')] });
    // no server at port 1: the old code got as far as connecting, to the key --to-key named
    const res = await runGovops(['state', 'migrate', '--state', 'state.json', '--to', 'postgres://govops:pw-never-shown@127.0.0.1:1/govops#prod', '--to-key', 'staging'], { cwd: home });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('--to names the state key prod (#prod) and --to-key staging');
    expect(res.stderr).not.toContain('pw-never-shown');
  });
});

describe('state show and list of a webhook whose recorded identity holds a credential in its url', () => {
  it('name the url without the credential (an adopted webhook of another team: its ?access_token= reached CI logs)', async () => {
    const home = await tmp();
    const file = path.join(home, 'state.json');
    const identity = JSON.stringify(['alerts', 'https://hooks.example.com/notify?access_token=tok3n-0f-an0ther-team']);
    // as an older govops wrote it (the url in clear; this one records it by its keyed fingerprint)
    await writeFile(file, JSON.stringify({ ...newState(), resources: [entry('alerts', { kind: 'Webhook', type: undefined, origin: 'adopted', identity })] }));
    for (const args of [['state', 'show', 'Webhook/alerts'], ['state', 'show', 'Webhook/alerts', '-o', 'json'], ['state', 'list', '-o', 'json']]) {
      const res = await runGovops([...args, '--state', file], { cwd: home });
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toContain('alerts');
      expect(res.stdout).not.toContain('tok3n-0f-an0ther-team');
    }
    // saved by this govops, the url is not in the file at all
    await saveState(file, await loadState(file));
    expect(await readFile(file, 'utf8')).not.toContain('hooks.example.com');
  });
});

describe('state adopt refusals as the operator reads them', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ transitionMs: 20 });
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/'));
    await h.writeManifest('other.yaml', webhook('other', 'https://hooks.example.com/other'));
    const applied = await h.govops(['apply', 'manifests']);
    expect(applied.code, applied.stderr + applied.stdout).toBe(0);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('names the types with their articles ("an object_store", "a lakehouse"), not "a object_store"', async () => {
    const id = (await h.state()).resources.find((r) => r.name === 'raw')!.id;
    await h.writeManifest('lake.yaml', lakehouseManifest({ name: 'lake', host: 'lake.example.com', httpPath: '/sql/1', tokenEnv: 'GOVOPS_SECRET_POLISH_TOKEN' }));
    const res = await h.govops(['state', 'adopt', 'Integration/lake', 'manifests', '--id', id], { GOVOPS_SECRET_POLISH_TOKEN: 't' });
    expect(res.code, res.stdout).toBe(1);
    expect(res.stderr).toContain(`integration ${id} is an object_store, the manifest Integration/lake a lakehouse`);
    expect(res.stderr).not.toMatch(/\ba object_store/);
  });

  it('onto a webhook another entry owns prints only the refusal, not a warning about the rename it does not make', async () => {
    const id = (await h.state()).resources.find((r) => r.name === 'other')!.id;
    await h.writeManifest('alerts.yaml', webhook('alerts', 'https://hooks.example.com/other'));
    const res = await h.govops(['state', 'adopt', 'Webhook/alerts', 'manifests', '--id', id]);
    expect(res.code, res.stdout).toBe(1);
    expect(res.stderr).toContain(`webhook ${id} is already managed as Webhook/other`);
    expect(res.stderr).not.toContain('warning');
    expect(res.stderr).not.toContain('rename');
  });
});
