/**
 * What a newcomer sees when something is wrong (issue #16): one-shot commands print each problem once, as
 * text; file-system, address and flag mistakes are user errors that say what is wrong and how to fix it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { lakeManifest, sqlManifest, webhookManifest } from '../apply/inproc.js';
import { manualLakeManifest } from '../helpers/manifests.js';

const DEFAULT_LEVEL = { GOVOPS_LOG_LEVEL: '' }; // the command's own default (warn for one-shot commands)
const JSON_LOG = /"level":\d+/;
const SECRETS = { GOVOPS_SECRET_LAKE_TOKEN: 'lake-tok-1', GOVOPS_SECRET_HOOK_SECRET: 'hook-sec-1', GOVOPS_SECRET_SQL_PASSWORD: 'sql-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-1' };

let h: Harness;
const run = (args: string[], env: Record<string, string> = {}) => h.govops(args, { ...SECRETS, ...DEFAULT_LEVEL, ...env });

beforeAll(async () => {
  h = await harness();
  await mkdir(path.join(h.dir, 'manifests'));
  await h.writeManifest('lake.yaml', lakeManifest('lake', 'lake.example.com'));
  await h.writeManifest('hook.yaml', webhookManifest('hook'));
  // A Git work tree with an uncommitted change: the plan's revision is `<sha>-dirty`.
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: h.dir });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'manifests');
});
afterAll(async () => {
  await h.close();
});

describe('one-shot commands print each problem once, as text', () => {
  it('plan of an invalid manifest in a dirty work tree: each diagnostic once, a closing count, no log lines', async () => {
    await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com').replace('    host:', '    hots:'));
    try {
      const r = await run(['plan', 'manifests']);
      expect(r.code).toBe(1);
      const all = `${r.stdout}${r.stderr}`;
      expect(all).not.toMatch(JSON_LOG);
      expect(all).not.toMatch(/revision rejected|-dirty/);
      const missing = r.stderr.split('\n').filter((l) => /missing required field `host`/.test(l));
      expect(missing).toEqual([expect.stringMatching(/^manifests\/sql\.yaml:\d+:\d+: Integration\/sql: missing required field `host`$/)]);
      expect(r.stderr.split('\n').filter((l) => /unknown field `hots`/.test(l))).toHaveLength(1);
      expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('error: 1 error in the manifests (listed above): nothing was planned');
    } finally {
      await h.writeManifest('sql.yaml', sqlManifest('sql', 'db.example.com'));
    }
  });

  it('apply without the secret variables: one line per unset variable reference, then the count', async () => {
    const r = await h.govops(['apply', 'manifests'], { ...DEFAULT_LEVEL, GOVOPS_SECRET_LAKE_TOKEN: '', GOVOPS_SECRET_HOOK_SECRET: '', GOVOPS_SECRET_SQL_PASSWORD: '', GOVOPS_SECRET_ADMIN_PASSWORD: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(JSON_LOG);
    const unset = r.stderr.split('\n').filter((l) => /environment variable \S+ is empty/.test(l));
    expect(unset).toHaveLength(4); // lake token, hook secret, sql password, delete-credentials password
    expect(new Set(unset).size).toBe(4);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe('error: 4 errors in the manifests (listed above): nothing was applied');
    expect(h.sandbox.requests().filter((q) => q.method !== 'GET')).toEqual([]);
  });
});

describe('state paths that cannot be used are user errors', () => {
  it('a state path under a file', async () => {
    await writeFile(path.join(h.dir, 'FILE'), 'x');
    const r = await run(['apply', 'manifests', '--state', 'FILE/state.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot create the folder of the state file .*FILE: .*FILE is a file, not a folder/);
    expect(r.stderr).toMatch(/--state PATH or GOVOPS_STATE/);
    expect(r.stderr).not.toMatch(/EEXIST|ENOTDIR/);
  });

  it('a state path under a dangling symbolic link', async () => {
    await symlink(path.join(h.dir, 'nowhere'), path.join(h.dir, 'dangling'));
    const r = await run(['apply', 'manifests', '--state', 'dangling/state.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/dangling is a symbolic link to something that does not exist/);
    expect(r.stderr).not.toMatch(/ENOENT/);
  });

  it('state list, show and forget of a state that does not exist (a mistyped --state): an error naming it, no folder made', async () => {
    for (const args of [['state', 'list'], ['state', 'list', '-o', 'json'], ['state', 'show', 'hook'], ['state', 'forget', 'hook']]) {
      const r = await run([...args, '--state', 'prod-stat/state.json']);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout, args.join(' ')).toBe('');
      expect(r.stderr, args.join(' ')).toMatch(/^error: there is no govops state at prod-stat\/state\.json/);
      expect(existsSync(path.join(h.dir, 'prod-stat')), args.join(' ')).toBe(false);
    }
  });

  it.skipIf(!existsSync('/proc/self'))('a state path on /proc fails at once (no spinning), naming the folder', async () => {
    const r = await h.govops(['apply', 'manifests', '--state', '/proc/nope/state.json'], { ...SECRETS, ...DEFAULT_LEVEL });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot create the folder of the state file \/proc\/nope: \/proc does not accept new folders/);
  }, 30_000);

  it('a state location that is a URL but not postgres:// is refused, never used as a file path (a typo would keep the state in the CI job)', async () => {
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [['apply', 'manifests'], { GOVOPS_STATE_URL: 'postgress://govops:pw-123@db.example/govops' }, /GOVOPS_STATE_URL is not a postgres:\/\/ \(postgresql:\/\/\) URL/],
      [['state', 'list'], { GOVOPS_STATE_URL: 'state.json' }, /GOVOPS_STATE_URL is not a postgres:\/\//],
      [['plan', 'manifests'], { GOVOPS_STATE: 's3://bucket/state.json' }, /GOVOPS_STATE is a URL with the scheme s3:\/\/:/],
      [['plan', 'manifests', '--state', 'mysql://h/db'], {}, /--state is a URL with the scheme mysql:\/\/:/],
      [['state', 'migrate', '--state', 'fresh.json', '--to', 'postgre://h/db'], {}, /--to is a URL with the scheme postgre:\/\/:/],
    ];
    for (const [args, env, message] of cases) {
      const r = await run(args, { GOVOPS_STATE: '', GOVOPS_STATE_URL: '', ...env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(message);
      expect(r.stderr).not.toContain('pw-123');
    }
    for (const scheme of ['postgress:', 's3:', 'mysql:', 'postgre:']) expect(existsSync(path.join(h.dir, scheme)), scheme).toBe(false);
  });

  it('state migrate to the same file spelled another way (./, a symbolic link) is refused at once, not after waiting for its own lock', async () => {
    await mkdir(path.join(h.dir, 'mig'), { recursive: true });
    await writeFile(path.join(h.dir, 'mig', 'state.json'), '{"version":1,"resources":[]}\n');
    await symlink(path.join(h.dir, 'mig', 'state.json'), path.join(h.dir, 'mig', 'link.json'));
    for (const to of ['./mig/state.json', 'mig/../mig/state.json', path.join(h.dir, 'mig', 'state.json'), 'mig/link.json']) {
      const r = await run(['state', 'migrate', '--state', 'mig/state.json', '--to', to]);
      expect(r.code, to).toBe(1);
      expect(r.stderr, to).toMatch(/--to names the same state as --state/);
    }
  });

  it('scripts with a state named and not found (a typo of --state, GOVOPS_STATE) is an error naming it, as for webhooks and state', async () => {
    await mkdir(path.join(h.dir, 'manual-typo'));
    await writeFile(path.join(h.dir, 'manual-typo', 'lake.yaml'), manualLakeManifest('/sql/1'));
    for (const [args, env] of [
      [['--state', 'typo.json'], {}],
      [[], { GOVOPS_STATE: 'typo.json' }],
    ] as const) {
      const r = await run(['scripts', 'lake', '--phase', 'edit', 'manual-typo', ...args], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: there is no govops state at typo\.json/m);
    }
  });

  it('an empty GOVOPS_STATE is as if unset (the default state), an empty --state is a usage error', async () => {
    expect((await run(['apply', 'manifests'])).code).toBe(0);
    const env = { GOVOPS_STATE: '' };
    // read as the path '', no state: every resource was to be adopted again (exit 2) and the apply failed writing
    const plan = await run(['plan', 'manifests', '--detailed-exitcode'], env);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    const list = await run(['state', 'list'], env);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/Webhook\/hook/);
    const flag = await run(['plan', 'manifests', '--state', '']);
    expect(flag.code).toBe(1);
    expect(flag.stderr).toMatch(/^error: --state is empty/);
  });

  it('every other option variable set empty (a CI file templated from an unset one) is as if unset too', async () => {
    const env = { GOVOPS_MANUAL_STEPS: '', GOVOPS_DATA_SOURCES_PATH: '', GOVOPS_DATA_SOURCE_DELETE_PATH: ' ', GOVOPS_SECRETS_DIR: '', GOVOPS_SECRET_ENV_PREFIX: '', GOVOPS_STATE_KEY: '' };
    const plan = await run(['plan', 'manifests', '--detailed-exitcode'], env);
    expect(plan.stderr).toBe('');
    expect(plan.code).toBe(0);
    const apply = await run(['apply', 'manifests'], env);
    expect(apply.stderr).toBe('');
    expect(apply.code).toBe(0);
  });

  it('GOVOPS_STATE is read by every command that takes --state', async () => {
    await writeFile(path.join(h.dir, 'corrupt.json'), '{ not json');
    await mkdir(path.join(h.dir, 'manual'));
    await writeFile(path.join(h.dir, 'manual', 'lake.yaml'), manualLakeManifest('/sql/1'));
    const env = { GOVOPS_STATE: 'corrupt.json' };
    for (const args of [['plan', 'manifests'], ['apply', 'manifests'], ['webhooks', 'list', 'manifests'], ['scripts', 'lake', '--phase', 'edit', 'manual'], ['state', 'list'], ['state', 'show', 'lake']]) {
      const r = await run(args, env);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr, args.join(' ')).toMatch(/corrupt\.json/);
    }
    // the flag wins over the variable
    expect((await run(['plan', 'manifests', '--state', 'fresh.json'], env)).code).toBe(0);
  });
});

describe('govops run: flags and addresses', () => {
  let busy: Server;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(async () => {
    await new Promise((r) => busy.close(r));
  });

  it('a busy --listen address says so and suggests --listen', async () => {
    const port = (busy.address() as { port: number }).port;
    const r = await run(['run', '--dir', 'manifests', '--listen', `127.0.0.1:${port}`, '--state', 'run-state.json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`));
    expect(r.stderr).toMatch(/hint: choose another address with --listen/);
  });

  it('--resync 0s and --interval 1ms name the flag and the value', async () => {
    const resync = await run(['run', '--dir', 'manifests', '--resync', '0s']);
    expect(resync.code).toBe(1);
    expect(resync.stderr).toMatch(/^error: --resync 0s: must be at least 10ms\n {2}hint: --resync is the drift check period/m);
    const interval = await run(['run', '--dir', 'manifests', '--interval', '1ms']);
    expect(interval.stderr).toMatch(/^error: --interval 1ms: must be at least 10ms/m);
  });
});

describe("a newcomer's wrong settings (issue #27)", () => {
  it('a wrong token: the 401 names GOVOPS_TOKEN, the raw-token format and the URL it was sent to', async () => {
    const res = await run(['plan', 'manifests'], { GOVOPS_TOKEN: 'not-the-token' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/401/);
    expect(res.stderr).toContain(`sent to: ${h.sandbox.url}/integrations`);
    expect(res.stderr).toMatch(/hint: check GOVOPS_TOKEN .*the raw token.*without "Bearer "/);
    expect(res.stderr).not.toContain('not-the-token');
  });

  it('a misspelled flag: the error and the did-you-mean, not the whole help', async () => {
    const res = await run(['plan', '--detaield-exitcode', 'manifests']);
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines[0]).toBe("error: unknown option '--detaield-exitcode'");
    expect(lines[1]).toBe('(Did you mean --detailed-exitcode?)');
    expect(lines.length).toBeLessThanOrEqual(3);
    expect(res.stderr).not.toContain('Usage:');
  });

  it('GOVOPS_URL pointing at a govops daemon: says it looks like one, not a bare 404', async () => {
    const { startHttpServer } = await import('../../src/daemon/server.js');
    const { Registry } = await import('prom-client');
    const { silentLogger } = await import('../../src/log.js');
    const daemon = await startHttpServer(
      { host: '127.0.0.1', port: 0 },
      { ready: () => ({ ready: true }), status: () => ({}), registry: new Registry(), hookSecret: undefined, onPush: () => false },
      silentLogger(),
    );
    try {
      const res = await run(['plan', 'manifests'], { GOVOPS_URL: daemon.url });
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/404/);
      expect(res.stderr).toContain(`sent to: ${daemon.url}/integrations`);
      expect(res.stderr).toMatch(/hint: this URL answers like a govops daemon/);
    } finally {
      await daemon.close();
    }
  });
});
