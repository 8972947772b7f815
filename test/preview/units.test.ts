/** Pure parts of the preview: the offline manifest diff and the Markdown rendering. */
import { describe, expect, it } from 'vitest';
import type { LoadedManifest, Manifest } from '../../src/manifests/types.js';
import { diffManifestSets } from '../../src/preview/manifest-diff.js';
import { renderPreview } from '../../src/preview/render.js';
import { PREVIEW_MARKER, type PreviewResult } from '../../src/preview/types.js';

const at = { file: 'm/x.yaml', line: 1, column: 1 };
const loaded = (manifest: Manifest): LoadedManifest => ({ manifest, source: at, dir: '/tmp', locate: () => at });
const sql = (name: string, config: Record<string, unknown>, labels?: Record<string, string>): LoadedManifest =>
  loaded({
    apiVersion: 'govops/v1',
    kind: 'Integration',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { type: 'sql_analytics', autoBootstrap: false, config },
  });

describe('diffManifestSets', () => {
  it('added, removed, changed; values shown except secrets; references shown', () => {
    const base = [
      sql('a', { host: 'a.example.com', port: 1433, password: 'pw-SECRET-1', username: { fromEnv: 'U1' } }),
      sql('gone', { host: 'g.example.com' }),
    ];
    const head = [
      sql('a', { host: 'a.example.com', port: 1434, password: 'pw-SECRET-2', username: { fromEnv: 'U2' }, impersonation: { enabled: true } }, { team: 'x' }),
      sql('new', { host: 'n.example.com' }),
    ];
    const diff = diffManifestSets(base, head);
    expect(diff.map((c) => `${c.action} ${c.name}`)).toEqual(['changed a', 'removed gone', 'added new']);
    expect(diff[0]!.changes).toEqual([
      { path: 'metadata.labels', after: { team: 'x' }, sensitive: false },
      { path: 'spec.config.impersonation', after: { enabled: true }, sensitive: false },
      { path: 'spec.config.password', sensitive: true },
      { path: 'spec.config.port', before: 1433, after: 1434, sensitive: false },
      { path: 'spec.config.username', before: { fromEnv: 'U1' }, after: { fromEnv: 'U2' }, sensitive: false },
    ]);
    expect(JSON.stringify(diff)).not.toContain('SECRET');
  });

  it('an object holding a secret, added whole, is sensitive; identical sets give no changes', () => {
    const base = [sql('a', { host: 'h' })];
    const head = [sql('a', { host: 'h', okta: { username: 'u', password: 'pw-SECRET-3', appId: 'app' } })];
    expect(diffManifestSets(base, head)[0]!.changes).toEqual([{ path: 'spec.config.okta', sensitive: true }]);
    expect(diffManifestSets(head, head)).toEqual([]);
  });
});

describe('renderPreview', () => {
  const result = (over: Partial<PreviewResult>): PreviewResult => ({
    formatVersion: 1,
    marker: PREVIEW_MARKER,
    mode: 'offline',
    valid: true,
    diagnostics: [],
    unknownSecrets: [],
    changed: false,
    exitCode: 0,
    ...over,
  });

  it('starts with the marker; table cells cannot break the table or inject HTML; fences stay closed', () => {
    const md = renderPreview(
      result({
        revision: 'abc1234',
        valid: false,
        exitCode: 1,
        diagnostics: [{ file: 'm/a|b.yaml', line: 2, column: 3, kind: 'Webhook', name: 'w', severity: 'error', message: 'bad ``` value' }],
        base: { ref: 'main', mergeBase: 'f'.repeat(40), files: [{ status: 'A', file: 'm/<img src=x>|.yaml' }] },
      }),
    );
    expect(md.split('\n')[0]).toBe(PREVIEW_MARKER);
    expect(md).toContain('| added | m/&lt;img src=x>\\|.yaml |');
    expect(md).toContain("m/a|b.yaml:2:3: Webhook/w: bad ''' value");
    expect(md).toContain('_No plan was made._');
    expect(md.match(/```/g)!.length % 2).toBe(0);
  });
});
