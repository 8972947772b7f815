/** Connection options: URL and token sources, clear errors, and a working client from them. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addConnectionOptions, clientFromOptions, resolveConnection } from '../../src/cli/connection.js';
import { UserError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-conn-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function userError(fn: () => unknown): UserError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UserError);
    return err as UserError;
  }
  throw new Error('expected a UserError');
}

describe('resolveConnection', () => {
  it('data-source paths from the flags, else GOVOPS_DATA_SOURCES_PATH / GOVOPS_DATA_SOURCE_DELETE_PATH; anything but a path is refused', () => {
    const env = { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't', GOVOPS_DATA_SOURCES_PATH: '/api/v2/s3/', GOVOPS_DATA_SOURCE_DELETE_PATH: '/api/v2/ds' };
    expect(resolveConnection({}, env)).toMatchObject({ dataSourcesPath: '/api/v2/s3', dataSourceDeletePath: '/api/v2/ds' });
    expect(resolveConnection({ dataSourcesPath: '/s3', dataSourceDeletePath: '/d' }, env)).toMatchObject({ dataSourcesPath: '/s3', dataSourceDeletePath: '/d' });
    for (const bad of ['s3', 'http://evil.example/x', '/a/../b', '/a?x=1', '/a b', '/a#f']) {
      expect(() => resolveConnection({ dataSourcesPath: bad }, env), bad).toThrow(/--data-sources-path: .* is not a path on the service/);
    }
  });

  it('takes the URL from --url or GOVOPS_URL and the token from GOVOPS_TOKEN', () => {
    expect(resolveConnection({}, { GOVOPS_URL: 'http://127.0.0.1:1/', GOVOPS_TOKEN: 't1' })).toEqual({
      baseUrl: 'http://127.0.0.1:1',
      token: 't1',
      timeoutMs: 30_000,
      retries: 4,
      dataSourcesPath: '/native-s3/handler',
      dataSourceDeletePath: '/dataSource',
    });
    expect(resolveConnection({ url: 'http://127.0.0.1:2/api', requestTimeout: '1m30s', retries: '0' }, { GOVOPS_URL: 'http://x', GOVOPS_TOKEN: 't' })).toMatchObject({
      baseUrl: 'http://127.0.0.1:2/api',
      timeoutMs: 90_000,
      retries: 0,
    });
  });

  it('--token-file wins over GOVOPS_TOKEN; surrounding whitespace is trimmed', () => {
    const f = path.join(dir, 'token');
    writeFileSync(f, '  file-token\n');
    expect(resolveConnection({ tokenFile: f }, { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 'env' }).token).toBe('file-token');
  });

  it('clear errors for a missing URL, token, unreadable token file, bad timeout or retries', () => {
    expect(userError(() => resolveConnection({}, { GOVOPS_TOKEN: 't' })).hint).toMatch(/--url .*GOVOPS_URL/);
    expect(userError(() => resolveConnection({ url: 'ftp://x' }, { GOVOPS_TOKEN: 't' })).message).toMatch(/http or https/);
    expect(userError(() => resolveConnection({ url: 'not a url' }, { GOVOPS_TOKEN: 't' })).message).toMatch(/invalid service URL/);
    const noToken = userError(() => resolveConnection({ url: 'http://127.0.0.1:1' }, {}));
    expect(noToken.hint).toMatch(/GOVOPS_TOKEN.*--token-file/);
    expect(userError(() => resolveConnection({ url: 'http://127.0.0.1:1', tokenFile: path.join(dir, 'nope') }, {})).message).toMatch(/ENOENT/);
    const empty = path.join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(userError(() => resolveConnection({ url: 'http://127.0.0.1:1', tokenFile: empty }, {})).message).toMatch(/empty/);
    expect(userError(() => resolveConnection({ requestTimeout: 'soon' }, { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't' })).message).toMatch(/--request-timeout/);
    expect(userError(() => resolveConnection({ retries: '-1' }, { GOVOPS_URL: 'http://127.0.0.1:1', GOVOPS_TOKEN: 't' })).message).toMatch(/--retries/);
  });

  it('a token an Authorization header cannot carry (a line break inside, a zero-width space pasted with it) is a user error naming neither it nor a network failure', () => {
    const twoLines = path.join(dir, 'two-lines');
    writeFileSync(twoLines, 'secret-part-one\nsecret-part-two\n');
    for (const [flags, env] of [
      [{ tokenFile: twoLines }, {}],
      [{}, { GOVOPS_TOKEN: 'secret-tok\u200ben' }],
      [{}, { GOVOPS_TOKEN: 'secret\u0000' }],
    ] as const) {
      const err = userError(() => resolveConnection({ url: 'http://127.0.0.1:1', ...flags }, env));
      expect(err.message).toMatch(/token .*cannot be sent in the Authorization header/);
      expect(`${err.message} ${err.hint ?? ''}`).not.toMatch(/secret/);
    }
    // a tab or a Latin-1 character is a valid header value
    expect(resolveConnection({ url: 'http://127.0.0.1:1' }, { GOVOPS_TOKEN: 'a\tb\u00e9' }).token).toBe('a\tb\u00e9');
  });

  it('addConnectionOptions declares the flags and offers no token flag', () => {
    const cmd = addConnectionOptions(new Command('x'));
    const flags = cmd.options.map((o) => o.long);
    expect(flags).toEqual(['--url', '--token-file', '--request-timeout', '--retries', '--data-sources-path', '--data-source-delete-path']);
    cmd.parse(['--url', 'http://127.0.0.1:3', '--retries', '2'], { from: 'user' });
    expect(cmd.opts()).toMatchObject({ url: 'http://127.0.0.1:3', retries: '2', requestTimeout: '30s' });
  });
});

describe('clientFromOptions', () => {
  let sb: SandboxHandle;
  beforeAll(async () => {
    sb = await startSandbox({ port: 0, transitionMs: 50, dev: true });
  });
  afterAll(async () => sb.close());

  it('builds a client that talks to the service with the token', async () => {
    const routes: string[] = [];
    const client = clientFromOptions({ url: sb.url }, silentLogger(), {
      env: { GOVOPS_TOKEN: sb.adminToken },
      onRequest: (e) => routes.push(`${e.method} ${e.route} ${e.status}`),
    });
    try {
      expect(await client.listIntegrations()).toEqual([]);
      expect(routes).toEqual(['GET /integrations 200']);
    } finally {
      await client.close();
    }
  });

  it('a replica identity no header can carry (--identity / GOVOPS_IDENTITY) still lets every request through', async () => {
    const client = clientFromOptions({ url: sb.url }, silentLogger(), { env: { GOVOPS_TOKEN: sb.adminToken }, identity: 'レプリカ-1\u0007 (a)' });
    try {
      expect(await client.listIntegrations()).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
