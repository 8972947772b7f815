/**
 * The build turns the schemas into validation code (scripts/build-validators.mjs → dist/manifests/
 * validators.generated.cjs, made by the suite's global setup). It must answer exactly what the validators
 * compiled at run time answer (the sources' path, used here): valid or not, and the same advice (warnings),
 * for every example manifest and for broken variants of them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { adviceKeyword, collectAdvice } from '../../src/manifests/advice.js';
import { replaceRefs } from '../../src/manifests/refs.js';
import { SCHEMA_FILES } from '../../src/manifests/schema-files.js';
import { generatedVariant, MANIFEST_VARIANTS, manifestVariant, validatorFor } from '../../src/manifests/schemas.js';

const generated = createRequire(import.meta.url)('../../dist/manifests/validators.generated.cjs') as Record<string, unknown>;
generated.adviceKeyword = adviceKeyword;
const variantModule = (key: string) => {
  const mod = createRequire(import.meta.url)(`../../dist/manifests/${generatedVariant(key).replace(/^\.\//, '')}`) as Record<string, unknown>;
  mod.adviceKeyword = adviceKeyword;
  return mod.v as (v: unknown) => boolean;
};
const generatedFor = (file: string) => generated[`v${SCHEMA_FILES.indexOf(file as (typeof SCHEMA_FILES)[number])}`] as (v: unknown) => boolean;

/** The examples, as validation sees them (secret references replaced by the placeholder). */
function examples(): unknown[] {
  const dir = path.resolve('examples');
  const docs: unknown[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.yaml'))) {
    for (const doc of loadAll(readFileSync(path.join(dir, f), 'utf8'))) {
      const d = structuredClone(doc) as { kind?: string; spec?: Record<string, unknown> };
      if (d.spec) for (const k of d.kind === 'Webhook' ? ['secret'] : ['config', 'deleteCredentials']) if (k in d.spec) d.spec[k] = replaceRefs(d.spec[k], ['spec', k], [], new Set());
      docs.push(d);
    }
  }
  return docs;
}

/** Broken and unusual variants of a document: missing, wrong-typed, empty and unknown fields. */
function variants(doc: unknown): unknown[] {
  const out: unknown[] = [doc];
  const d = doc as { metadata?: Record<string, unknown>; spec?: Record<string, unknown> };
  const spec = d.spec ?? {};
  const config = (spec.config ?? {}) as Record<string, unknown>;
  out.push({ ...d, metadata: {} });
  out.push({ ...d, spec: { ...spec, unknownField: 1 } });
  for (const k of Object.keys(config)) {
    out.push({ ...d, spec: { ...spec, config: { ...config, [k]: undefined } } });
    out.push({ ...d, spec: { ...spec, config: { ...config, [k]: 42.5 } } });
    out.push({ ...d, spec: { ...spec, config: { ...config, [k]: '' } } });
  }
  out.push({ ...d, spec: { ...spec, config: { ...config, surprise: 'x', port: 70000 } } });
  if (Array.isArray(spec.notificationType)) out.push({ ...d, spec: { ...spec, notificationType: [...(spec.notificationType as unknown[]), ...(spec.notificationType as unknown[])], url: 'ftp://x' } });
  return out.map((v) => JSON.parse(JSON.stringify(v)) as unknown);
}

describe('generated validators', () => {
  it('answer as the run-time compiled ones: valid or not, and the same advice', () => {
    const docs = examples().flatMap(variants);
    expect(docs.length).toBeGreaterThan(100);
    let invalid = 0;
    for (const file of ['manifest.json']) {
      const runtime = validatorFor(file);
      const built = generatedFor(file);
      for (const doc of docs) {
        const a = collectAdvice(runtime, doc);
        const b = collectAdvice(built, doc);
        expect(b.result, JSON.stringify(doc)).toBe(a.result);
        expect(b.advice).toEqual(a.advice);
        if (!a.result) invalid++;
      }
    }
    expect(invalid).toBeGreaterThan(10);
  });

  it('exist for every schema file', () => {
    for (const f of SCHEMA_FILES) expect(typeof generatedFor(f), f).toBe('function');
  });

  it('the manifest check of each kind (loaded alone) answers as the whole one for the values it is used for', () => {
    // every example under every kind, type and manifest kind: a config of one kind checked as another's, too
    const base = examples().flatMap(variants);
    const docs = base.flatMap((doc) => {
      const d = doc as { kind?: unknown; spec?: Record<string, unknown> };
      return [
        doc,
        ...MANIFEST_VARIANTS.filter((k) => k !== 'other').map((type) => ({ ...d, kind: 'Integration', spec: { ...d.spec, type } })),
        { ...d, kind: 'Webhook' },
        { ...d, kind: 'DataSource' },
        { ...d, kind: 'Other' },
      ];
    });
    const runtime = validatorFor('manifest.json');
    const used = new Map<string, number>();
    let invalid = 0;
    for (const doc of docs) {
      const key = manifestVariant(doc);
      if (key === undefined) continue;
      used.set(key, (used.get(key) ?? 0) + 1);
      const a = collectAdvice(runtime, doc);
      const b = collectAdvice(variantModule(key), doc);
      expect(b.result, `${key}: ${JSON.stringify(doc)}`).toBe(a.result);
      expect(b.advice).toEqual(a.advice);
      if (!a.result) invalid++;
    }
    expect([...used.keys()].sort()).toEqual([...MANIFEST_VARIANTS].sort());
    expect(invalid).toBeGreaterThan(100);
    // no kind, or an unknown type: the whole check
    expect(manifestVariant({ spec: { type: 'object_store' } })).toBeUndefined();
    expect(manifestVariant({ kind: 'Integration', spec: { type: 'nope' } })).toBeUndefined();
    expect(manifestVariant({ kind: 'Integration' })).toBeUndefined();
    expect(manifestVariant({ kind: 'Webhook' })).toBe('other');
  });

  it('a manifest check by kind is much smaller than the whole module', () => {
    const size = (rel: string) => readFileSync(path.resolve('dist/manifests', rel)).length;
    const whole = size('validators.generated.cjs');
    for (const key of MANIFEST_VARIANTS) expect(size(generatedVariant(key)), key).toBeLessThan(whole / 2);
  });
});
