import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toDesired } from '../../src/plan/desired.js';
import { canonicalJson } from '../../src/plan/diff.js';
import type { IntegrationManifest } from '../../src/manifests/types.js';
import { HASH } from './fixtures.js';

/** The spec hash as it was first defined: secrets replaced by their fingerprints in a copy, canonical JSON of it. */
function specHashByCopy(kind: string, body: Record<string, unknown>, fingerprints: Record<string, string>): string {
  const copy = structuredClone(body);
  for (const [path, fp] of Object.entries(fingerprints)) {
    const parts = path.split('.');
    let cur = copy;
    for (const p of parts.slice(0, -1)) cur = cur[p] as Record<string, unknown>;
    cur[parts[parts.length - 1]!] = `fingerprint:${fp}`;
  }
  return HASH.digest(JSON.stringify(sortKeys({ kind, body: copy })));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

describe('spec hash and canonical JSON with substitutions', () => {
  it('canonicalJson with substitutions equals canonicalJson of a copy holding the substituted values, and leaves the value unchanged', () => {
    const json = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
      object: fc.dictionary(fc.constantFrom('a', 'b', 'password', 'c.d', 'Z', ''), tie('value'), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(json.object, fc.array(fc.tuple(fc.constantFrom('a', 'b', 'password', 'new'), fc.oneof(fc.string(), fc.constant(undefined))), { maxLength: 3 }), (obj, subsList) => {
        const before = JSON.stringify(obj);
        const inner = Object.values(obj).find((v) => v && typeof v === 'object' && !Array.isArray(v)) as Record<string, unknown> | undefined;
        const holder = inner ?? obj;
        // substitutions name properties the object holds (as toDesired's secrets do)
        subsList = subsList.filter(([k]) => k in holder);
        const subs = new Map([[holder as object, new Map<string, unknown>(subsList)]]);
        const copy = structuredClone(obj);
        const copyHolder = inner ? (Object.values(copy).find((v) => v && typeof v === 'object' && !Array.isArray(v)) as Record<string, unknown>) : copy;
        for (const [k, v] of subsList) copyHolder[k] = v;
        expect(canonicalJson(obj, subs)).toBe(canonicalJson(copy));
        expect(JSON.stringify(obj)).toBe(before);
      }),
    );
  });

  it('toDesired hashes the spec with each secret replaced by its fingerprint, as before, and leaves the body as sent', () => {
    const m: IntegrationManifest = {
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name: 'wh' },
      spec: {
        type: 'cloud_warehouse',
        autoBootstrap: true,
        config: { host: 'wh.example.com', username: 'svc', password: 'pw-1', lineage: { enabled: true, token: 'tk' }, audit: { enabled: true } },
      },
    };
    const d = toDesired(m, { file: 'm.yaml', line: 1, column: 1 }, ['spec.config.password'], HASH);
    expect(Object.keys(d.fingerprints).sort()).toEqual(['config.lineage.token', 'config.password', 'config.username']);
    expect(d.specHash).toBe(specHashByCopy('Integration', d.body as unknown as Record<string, unknown>, d.fingerprints));
    expect((d.body as { config: Record<string, unknown> }).config.password).toBe('pw-1');
    expect(((d.body as { config: Record<string, { token?: string }> }).config.lineage!).token).toBe('tk');
    // a different secret value gives a different hash; the same value the same hash
    const other = toDesired({ ...m, spec: { ...m.spec, config: { ...m.spec.config, password: 'pw-2' } } }, { file: 'm.yaml', line: 1, column: 1 }, ['spec.config.password'], HASH);
    expect(other.specHash).not.toBe(d.specHash);
    expect(toDesired(m, { file: 'm.yaml', line: 1, column: 1 }, ['spec.config.password'], HASH).specHash).toBe(d.specHash);
  });

  it('is worked out when first read, once: a plan that reads no spec hash digests nothing (issue #26)', () => {
    const digested: string[] = [];
    const hashing = { fingerprint: HASH.fingerprint, digest: (text: string) => (digested.push(text), HASH.digest(text)) };
    const m: IntegrationManifest = {
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name: 'lazy' },
      spec: { type: 'cloud_warehouse', autoBootstrap: true, config: { host: 'wh.example.com', username: 'svc', password: 'pw-1' } },
    };
    const d = toDesired(m, { file: 'm.yaml', line: 1, column: 1 }, ['spec.config.password'], hashing, true);
    expect(digested).toEqual([]);
    const hash = d.specHash;
    expect(hash).toBe(specHashByCopy('Integration', d.body as unknown as Record<string, unknown>, d.fingerprints));
    expect(d.specHash).toBe(hash);
    expect(digested).toHaveLength(1);
    // a value like any other: in its JSON, and in a copy
    expect(JSON.parse(JSON.stringify(d)).specHash).toBe(hash);
    expect({ ...d }.specHash).toBe(hash);
    expect(digested).toHaveLength(1);
  });

  it('is one getter shared by every desired resource, each hashed with its own hashing (a getter per object costs ~1 KB each)', () => {
    const other = { fingerprint: HASH.fingerprint, digest: (text: string) => `other:${HASH.digest(text)}` };
    const m = (name: string): IntegrationManifest => ({
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name },
      spec: { type: 'cloud_warehouse', autoBootstrap: true, config: { host: `${name}.example.com`, username: 'svc', password: 'pw-1' } },
    });
    const src = { file: 'm.yaml', line: 1, column: 1 };
    const a = toDesired(m('a'), src, ['spec.config.password'], HASH, true);
    const b = toDesired(m('b'), src, ['spec.config.password'], other, true);
    const getter = (d: object) => Object.getOwnPropertyDescriptor(d, 'specHash')?.get;
    expect(getter(a)).toBeTypeOf('function');
    expect(getter(b)).toBe(getter(a));
    expect(Object.getOwnPropertyDescriptor(a, 'specHash')?.enumerable).toBe(true);
    expect(a.specHash).toBe(specHashByCopy('Integration', a.body as unknown as Record<string, unknown>, a.fingerprints));
    expect(b.specHash).toBe(`other:${specHashByCopy('Integration', b.body as unknown as Record<string, unknown>, b.fingerprints)}`);
  });
});

describe('a secret reference inside a list', () => {
  it('makes the list a secret as a whole: fingerprinted, in the spec hash by its fingerprint, never shown by value', async () => {
    const { resolveSecrets } = await import('../../src/manifests/secrets.js');
    const { creationFields, diffIntegration } = await import('../../src/plan/integrations.js');
    const { SHAPES } = await import('./fixtures.js');
    const SECRET = 'role-from-the-vault-7f3a';
    const m: IntegrationManifest = {
      apiVersion: 'govops/v1',
      kind: 'Integration',
      metadata: { name: 'wh' },
      spec: {
        type: 'cloud_warehouse',
        autoBootstrap: true,
        config: {
          host: 'wh.example.com',
          username: 'svc',
          password: { fromEnv: 'GOVOPS_SECRET_PW' },
          userRolePattern: { exclude: [{ fromEnv: 'GOVOPS_SECRET_ROLE' }, 'PUBLIC'] },
        } as unknown as IntegrationManifest['spec']['config'],
      },
    };
    const loaded = { manifest: m, source: { file: 'm.yaml', line: 1, column: 1 }, dir: '/nowhere', locate: () => ({ file: 'm.yaml', line: 1, column: 1 }) };
    const r = resolveSecrets(loaded as never, { env: { GOVOPS_SECRET_PW: 'pw-value-1', GOVOPS_SECRET_ROLE: SECRET } });
    expect(r.diagnostics).toEqual([]);
    const digested: string[] = [];
    const hashing = { fingerprint: HASH.fingerprint, digest: (text: string) => (digested.push(text), HASH.digest(text)) };
    const d = toDesired(r.manifest, { file: 'm.yaml', line: 1, column: 1 }, r.secretPaths, hashing);
    // the state records a keyed fingerprint of the list, and the spec hash (stored in the state) is no plain digest of the value
    expect(Object.keys(d.fingerprints)).toContain('config.userRolePattern.exclude');
    void d.specHash;
    expect(digested.join('\n')).not.toContain(SECRET);
    // the body is sent as written
    expect((d.body as unknown as { config: { userRolePattern: { exclude: string[] } } }).config.userRolePattern.exclude).toEqual([SECRET, 'PUBLIC']);
    // the plan shows the list as sensitive, never its value
    const created = creationFields(SHAPES, d as never);
    expect(JSON.stringify(created)).not.toContain(SECRET);
    expect(created.find((f) => f.path === 'config.userRolePattern.exclude')).toMatchObject({ sensitive: true });
    // an update of another field: the list is compared by its fingerprint, and not shown
    const live = { id: '1', type: 'cloud_warehouse', autoBootstrap: true, status: 'enabled', config: { ...(d.body as unknown as { config: Record<string, unknown> }).config, password: '********', username: '********', userRolePattern: { exclude: ['OTHER', 'PUBLIC'] } } };
    const state = { kind: 'Integration', name: 'wh', id: '1', origin: 'created', specHash: 'x', secretFingerprints: { ...d.fingerprints }, updatedAt: '' };
    const diff = diffIntegration(SHAPES, d as never, live as never, state as never);
    expect(JSON.stringify(diff)).not.toContain(SECRET);
  });
});
