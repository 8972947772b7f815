/** The manual-step acknowledgment: tokens, the annotation's syntax, its schema rule. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ANNOTATION_PATTERN, ackPhaseOf, acknowledgmentLine, parseAcknowledgments } from '../../src/plan/acknowledgment.js';
import { manualStepFacts, manualStepToken } from '../../src/reconcile/manual-step-token.js';
import type { IntegrationManifest } from '../../src/manifests/types.js';
import { errors } from '../manifests/helpers.js';

const lake = {
  workspaceUrl: 'https://lake.example.com',
  httpPath: '/sql/1',
  token: { fromEnv: 'LAKE_TOKEN' },
  catalog: 'gov',
};

function manifest(config: Record<string, unknown>, annotations?: Record<string, string>): IntegrationManifest {
  return {
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name: 'lake', ...(annotations ? { annotations } : {}) },
    spec: { type: 'lakehouse', autoBootstrap: false, config },
  };
}

describe('manual-step tokens', () => {
  it('are 8 hex digits, reproducible, and differ per phase and per kind', () => {
    const t = manualStepToken('edit', 'lakehouse', lake);
    expect(t).toMatch(/^[0-9a-f]{8}$/);
    expect(manualStepToken('edit', 'lakehouse', structuredClone(lake))).toBe(t);
    expect(manualStepToken('create', 'lakehouse', lake)).not.toBe(t);
    expect(manualStepToken('delete', 'lakehouse', lake)).not.toBe(t);
    expect(manualStepToken('edit', 'sql_analytics', lake)).not.toBe(t);
  });

  it('are sha256 over the canonical JSON of [version, phase, type, non-secret config] (acknowledgments already written stay valid)', () => {
    const canonical = { catalog: 'gov', httpPath: '/sql/1', token: '(secret)', workspaceUrl: 'https://lake.example.com' };
    const expected = createHash('sha256').update(JSON.stringify(['govops/manual-step/v1', 'edit', 'lakehouse', canonical])).digest('hex').slice(0, 8);
    expect(manualStepToken('edit', 'lakehouse', lake)).toBe(expected);
    expect(manualStepFacts(manifest(lake)).tokens.edit).toBe(expected);
  });

  it('change when the non-secret configuration changes, at any depth', () => {
    const t = manualStepToken('edit', 'lakehouse', lake);
    expect(manualStepToken('edit', 'lakehouse', { ...lake, httpPath: '/sql/2' })).not.toBe(t);
    expect(manualStepToken('edit', 'lakehouse', { ...lake, audit: { enabled: true } })).not.toBe(t);
    expect(manualStepToken('edit', 'lakehouse', { ...lake, audit: { enabled: false } })).not.toBe(
      manualStepToken('edit', 'lakehouse', { ...lake, audit: { enabled: true } }),
    );
  });

  it('do not depend on key order, nor on secret values or where a secret comes from', () => {
    const t = manualStepToken('edit', 'lakehouse', lake);
    const reordered = { catalog: 'gov', token: { fromEnv: 'LAKE_TOKEN' }, httpPath: '/sql/1', workspaceUrl: 'https://lake.example.com' };
    expect(manualStepToken('edit', 'lakehouse', reordered)).toBe(t);
    // another reference, a file reference, a literal: the token (a secret field is there) is the same
    expect(manualStepToken('edit', 'lakehouse', { ...lake, token: { fromEnv: 'OTHER' } })).toBe(t);
    expect(manualStepToken('edit', 'lakehouse', { ...lake, token: { fromFile: 'secrets/t' } })).toBe(t);
    expect(manualStepToken('edit', 'lakehouse', { ...lake, token: 'a-literal-token' })).toBe(t);
    // whether there is a secret field counts
    const { token: _t, ...noToken } = lake;
    expect(manualStepToken('edit', 'lakehouse', noToken)).not.toBe(t);
    // a nested credential (okta.password) likewise; a plain username is configuration
    const okta = { host: 'c.example.com', database: 'd', authenticationType: 'okta', okta: { username: 'u', password: 'p1', appId: 'a', idpHost: 'h', role: 'r' } };
    const o = manualStepToken('create', 'columnar_warehouse', okta);
    expect(manualStepToken('create', 'columnar_warehouse', { ...okta, okta: { ...okta.okta, password: 'p2' } })).toBe(o);
    expect(manualStepToken('create', 'columnar_warehouse', { ...okta, okta: { ...okta.okta, username: 'u2' } })).not.toBe(o);
  });

  it('the facts of a manifest: a token per phase and the annotation parsed', () => {
    const f = manualStepFacts(manifest(lake, { 'govops/manual-step': 'create:0123abcd, edit:89abcdef' }));
    expect(f.tokens.edit).toBe(manualStepToken('edit', 'lakehouse', lake));
    expect(Object.keys(f.tokens).sort()).toEqual(['cleanup', 'create', 'delete', 'edit']);
    expect(f.acknowledged).toEqual([
      { phase: 'create', token: '0123abcd' },
      { phase: 'edit', token: '89abcdef' },
    ]);
    expect(manualStepFacts(manifest(lake)).acknowledged).toEqual([]);
  });
});

describe('the annotation', () => {
  it('names the step: initial-create is acknowledged as create, post-cleanup as cleanup', () => {
    expect(ackPhaseOf('initial-create')).toBe('create');
    expect(ackPhaseOf('create')).toBe('create');
    expect(ackPhaseOf('edit')).toBe('edit');
    expect(ackPhaseOf('delete')).toBe('delete');
    expect(ackPhaseOf('cleanup')).toBe('cleanup');
    expect(ackPhaseOf('post-cleanup')).toBe('cleanup');
  });

  it('is printed and parsed in one form', () => {
    const line = acknowledgmentLine([{ phase: 'edit', token: '3f9a1c2b' }]);
    expect(line).toBe('govops/manual-step: "edit:3f9a1c2b"');
    expect(parseAcknowledgments('delete:00000000 create:11111111')).toEqual([
      { phase: 'delete', token: '00000000' },
      { phase: 'create', token: '11111111' },
    ]);
    expect(parseAcknowledgments('edit:XYZ')).toEqual([]);
    expect(parseAcknowledgments(undefined)).toEqual([]);
  });

  it('the schema rule is the one the code parses', () => {
    const schema = JSON.parse(readFileSync(new URL('../../schemas/manifest.json', import.meta.url), 'utf8'));
    expect(schema.$defs.metadata.properties.annotations.properties['govops/manual-step'].pattern).toBe(ANNOTATION_PATTERN);
    const re = new RegExp(ANNOTATION_PATTERN);
    for (const ok of ['edit:3f9a1c2b', ' delete:00000000, create:11111111 ', 'cleanup:abcdef01']) expect(ok).toMatch(re);
    for (const bad of ['edit', 'edit:3F9A1C2B', 'edit:3f9a1c2', 'initial-create:3f9a1c2b', 'edit:3f9a1c2b;']) expect(bad).not.toMatch(re);
  });

  it('validate reports a malformed acknowledgment at its line', () => {
    const found = errors(`apiVersion: govops/v1
kind: Integration
metadata:
  name: lake
  annotations:
    govops/manual-step: "edit 3f9a1c2b"
spec:
  type: lakehouse
  autoBootstrap: false
  config:
    workspaceUrl: https://lake.example.com
    httpPath: /sql/1
    token: { fromEnv: LAKE_TOKEN }
`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ line: 6 });
    expect(found[0]!.message).toMatch(/govops scripts NAME --phase PHASE --ack/);
  });
});
