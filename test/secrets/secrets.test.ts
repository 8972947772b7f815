/** Secret resolution: env and file refs, trailing newline, sensitive paths, diagnostics with line/col. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LineCounter, parseDocument, isNode } from 'yaml';
import { MAX_SECRET_FILE_BYTES, resolveAllSecrets, resolveSecrets, secretValues } from '../../src/manifests/secrets.js';
import type { LoadedManifest, Manifest } from '../../src/manifests/types.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'govops-secrets-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A lakehouse integration whose token is read from `file` (written into the YAML as it is given). */
const lakeWithTokenFile = (file: string): string => `apiVersion: govops/v1
kind: Integration
metadata: { name: lake }
spec:
  type: lakehouse
  config:
    workspaceUrl: https://ws.example.com
    httpPath: /sql/1
    token: { fromFile: ${file} }
`;

/** A LoadedManifest built from YAML text, with real positions (as the loader gives them). */
function loaded(text: string, file = 'manifests/db.yaml'): LoadedManifest {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc });
  const at = (offset: number) => {
    const p = lc.linePos(offset);
    return { file, line: p.line, column: p.col };
  };
  return {
    manifest: doc.toJS() as Manifest,
    source: at(0),
    dir,
    locate(p) {
      const node = doc.getIn(p, true);
      return at(isNode(node) && node.range ? node.range[0] : 0);
    },
  };
}

const SQL = `apiVersion: govops/v1
kind: Integration
metadata:
  name: warehouse
spec:
  type: sql_analytics
  autoBootstrap: true
  config:
    host: db.example.com
    database: gov
    schema: views
    username: svc_user
    password:
      fromEnv: GOVOPS_SECRET_DB_PASSWORD
    impersonation:
      enabled: true
  deleteCredentials:
    authenticationType: userPassword
    username: admin
    password: { fromFile: secrets/admin.txt }
`;

describe('resolveSecrets', () => {
  it('replaces env and file refs (one trailing newline trimmed) and lists the secret paths', () => {
    writeFileSync(path.join(dir, 'admin.txt'), 'line1\nadmin-pass\n\n');
    const src = loaded(SQL.replace('secrets/admin.txt', 'admin.txt'));
    const out = resolveSecrets(src, { env: { GOVOPS_SECRET_DB_PASSWORD: 's3cr3t-value' } });
    expect(out.diagnostics).toEqual([]);
    const spec = out.manifest.spec as { config: Record<string, unknown>; deleteCredentials: Record<string, unknown> };
    expect(spec.config.password).toBe('s3cr3t-value');
    expect(spec.deleteCredentials.password).toBe('line1\nadmin-pass\n');
    expect(out.secretPaths).toEqual([
      'spec.config.password',
      'spec.config.username',
      'spec.deleteCredentials.password',
      'spec.deleteCredentials.username',
    ]);
    // the input is untouched (deep copy)
    expect((src.manifest.spec as { config: Record<string, unknown> }).config.password).toEqual({ fromEnv: 'GOVOPS_SECRET_DB_PASSWORD' });
  });

  it('fromFile relative to the manifest folder, CRLF newline; an absolute path is refused without reading it', () => {
    const abs = path.join(dir, 'tok.txt');
    writeFileSync(abs, 'dapi-123\r\n');
    const refused = resolveSecrets(loaded(lakeWithTokenFile(JSON.stringify(abs))), { env: {}, readFile: () => { throw new Error('must not read'); } });
    expect(refused.diagnostics).toHaveLength(1);
    expect(refused.diagnostics[0]).toMatchObject({ line: 9, rule: 'secret-scope', severity: 'error' });
    expect(refused.diagnostics[0]!.message).toMatch(/absolute path.*--secrets-dir \/ GOVOPS_SECRETS_DIR/);
    const src = loaded(lakeWithTokenFile('tok.txt'));
    const out = resolveSecrets(src, { env: {} });
    expect((out.manifest.spec as unknown as { config: { token: string } }).config.token).toBe('dapi-123');
    expect(out.secretPaths).toEqual(['spec.config.token']);
  });

  it('a secret file larger than 64 KiB, a folder or a FIFO is an error at the reference, never read whole (nor waited on)', () => {
    writeFileSync(path.join(dir, 'huge.txt'), 'x'.repeat(MAX_SECRET_FILE_BYTES + 1));
    writeFileSync(path.join(dir, 'edge.txt'), `${'y'.repeat(MAX_SECRET_FILE_BYTES - 1)}\n`);
    mkdirSync(path.join(dir, 'folder'));
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    const ref = (file: string) =>
      loaded(lakeWithTokenFile(file), path.join(dir, 'db.yaml'));
    const message = (file: string) => resolveSecrets(ref(file), { env: {} }).diagnostics.map((d) => d.message).join('\n');
    expect(message('huge.txt')).toMatch(/cannot read secret file .*huge\.txt \(larger than 65536 bytes: a secret file holds one value\)/);
    expect(message('folder')).toMatch(/cannot read secret file .*folder \(not a regular file\)/);
    expect(message('pipe')).toMatch(/cannot read secret file .*pipe \(not a regular file\)/);
    const edge = resolveSecrets(ref('edge.txt'), { env: {} });
    expect(edge.diagnostics).toEqual([]);
    expect((edge.manifest.spec as unknown as { config: { token: string } }).config.token).toHaveLength(MAX_SECRET_FILE_BYTES - 1);
  });

  it('a missing variable is an error diagnostic at the reference, naming it, without any value', () => {
    const out = resolveSecrets(loaded(SQL), { env: { OTHER: 'x' } });
    const d = out.diagnostics.find((x) => x.message.includes('GOVOPS_SECRET_DB_PASSWORD'))!;
    expect(d).toMatchObject({ file: 'manifests/db.yaml', line: 14, column: 7, kind: 'Integration', name: 'warehouse', severity: 'error' });
    expect(d.message).toMatch(/spec\.config\.password: environment variable GOVOPS_SECRET_DB_PASSWORD is not set/);
    const f = out.diagnostics.find((x) => x.message.includes('admin.txt'))!;
    expect(f).toMatchObject({ line: 20, column: 15, severity: 'error' });
    expect(f.message).toMatch(/cannot read secret file .*admin\.txt \(ENOENT\)/);
  });

  it('an empty variable is an error too', () => {
    const out = resolveSecrets(loaded(SQL), { env: { GOVOPS_SECRET_DB_PASSWORD: '' }, readFile: () => 'file-secret' });
    expect(out.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/GOVOPS_SECRET_DB_PASSWORD is empty/)]);
  });

  it('webhook secrets resolve and are always secret paths, even as a literal', () => {
    const out = resolveSecrets(
      loaded(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec:
  url: https://hooks.example.com/x
  global: false
  notificationType: [userCreated]
  actionType: triggered
  secret: { fromEnv: GOVOPS_SECRET_HOOK }
`),
      { env: { GOVOPS_SECRET_HOOK: 'hmac-key' } },
    );
    expect((out.manifest.spec as { secret: string }).secret).toBe('hmac-key');
    expect(out.secretPaths).toEqual(['spec.secret']);
    const plain = resolveSecrets(
      loaded(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec: { url: 'https://x', global: true, notificationType: [a], actionType: receive, secret: literal }
`),
      { env: {} },
    );
    expect(plain.secretPaths).toEqual(['spec.secret']);
    expect(plain.diagnostics).toEqual([]);
  });

  it('resolves refs nested in objects (okta) and uses the injected readFile relative to the manifest dir', () => {
    const seen: string[] = [];
    const out = resolveSecrets(
      loaded(`apiVersion: govops/v1
kind: Integration
metadata: { name: cw }
spec:
  type: columnar_warehouse
  autoBootstrap: false
  config:
    host: cw.example.com
    database: d
    authenticationType: okta
    okta: { username: u, password: { fromFile: okta.pw }, appId: a, idpHost: h, role: r }
`),
      { env: {}, readFile: (p) => (seen.push(p), 'okta-secret\n') },
    );
    expect(seen).toEqual([path.join(dir, 'okta.pw')]);
    expect((out.manifest.spec as unknown as { config: { okta: { password: string } } }).config.okta.password).toBe('okta-secret');
    expect(out.secretPaths).toEqual(['spec.config.okta.password', 'spec.config.okta.username']);
  });

  it('cloud_warehouse privateKey: each new line of the key sent as a backslash followed by n (interface 2.8), from a file or a literal; other fields as read', () => {
    const out = resolveSecrets(
      loaded(`apiVersion: govops/v1
kind: Integration
metadata: { name: cw }
spec:
  type: cloud_warehouse
  autoBootstrap: true
  config:
    host: cw.example.com
    warehouse: w
    database: d
    role: r
    authenticationType: keyPair
    username: u
    privateKey: { fromFile: key.pem }
    connectArgs: { fromEnv: GOVOPS_SECRET_ARGS }
  deleteCredentials:
    authenticationType: keyPair
    role: r
    privateKey: |
      -----BEGIN PRIVATE KEY-----
      bGluZS1vbmU=
      -----END PRIVATE KEY-----
`),
      { env: { GOVOPS_SECRET_ARGS: 'a=1\nb=2' }, readFile: () => '-----BEGIN PRIVATE KEY-----\r\nbGluZS1vbmU=\r\n-----END PRIVATE KEY-----\r\n' },
    );
    expect(out.diagnostics).toEqual([]);
    const spec = out.manifest.spec as unknown as { config: Record<string, string>; deleteCredentials: Record<string, string> };
    expect(spec.config.privateKey).toBe('-----BEGIN PRIVATE KEY-----\\nbGluZS1vbmU=\\n-----END PRIVATE KEY-----');
    expect(spec.deleteCredentials.privateKey).toBe('-----BEGIN PRIVATE KEY-----\\nbGluZS1vbmU=\\n-----END PRIVATE KEY-----\\n');
    expect(spec.config.connectArgs).toBe('a=1\nb=2');
  });
});

describe('resolveAllSecrets', () => {
  it('checks and reads each reference once per folder, however many manifests name it; a failure is reported at each', () => {
    writeFileSync(path.join(dir, 'admin.txt'), 'admin-pass\n');
    const text = SQL.replace('secrets/admin.txt', 'admin.txt');
    const many = [loaded(text), loaded(text.replace('name: warehouse', 'name: w2')), loaded(text.replace('name: warehouse', 'name: w3'))];
    const realpaths: string[] = [];
    const envReads: string[] = [];
    const env = new Proxy({ GOVOPS_SECRET_DB_PASSWORD: 'db-pass' } as Record<string, string | undefined>, {
      get: (t, k: string) => (envReads.push(k), t[k]),
    });
    const out = resolveAllSecrets(many, { env, realpath: (p) => (realpaths.push(p), p) });
    expect(out.diagnostics).toEqual([]);
    for (const r of out.resolved) {
      expect(secretValues(r)).toMatchObject({ 'config.password': 'db-pass', 'deleteCredentials.password': 'admin-pass' });
    }
    // one resolution of each reference (the file and its root through realpath), not one per manifest
    expect(envReads).toEqual(['GOVOPS_SECRET_DB_PASSWORD']);
    expect(realpaths).toEqual([path.join(dir, 'admin.txt'), dir]);
    // a reference that fails is not remembered: each manifest gets its diagnostic
    const missing = resolveAllSecrets(many, { env: {} });
    expect(missing.diagnostics.filter((d) => d.message.includes('GOVOPS_SECRET_DB_PASSWORD is not set')).map((d) => d.name)).toEqual(['warehouse', 'w2', 'w3']);
  });
});

describe('secretValues', () => {
  it('gives the resolved secret strings keyed relative to spec, skipping unresolved refs', () => {
    const out = resolveSecrets(loaded(SQL), { env: { GOVOPS_SECRET_DB_PASSWORD: 'pw1' } });
    expect(secretValues(out)).toEqual({
      'config.password': 'pw1',
      'config.username': 'svc_user',
      'deleteCredentials.username': 'admin',
    });
  });
});
