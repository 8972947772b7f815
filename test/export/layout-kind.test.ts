/**
 * `govops export --layout kind` of a large service: one file per kind would pass the loader's size limit (1 MiB)
 * or document limit, and govops would refuse to read back what it wrote. The kind's documents are split over
 * `webhooks.yaml`, `webhooks-2.yaml`, ... each one the loader reads.
 */
import { describe, expect, it } from 'vitest';
import { renderExport } from '../../src/export/write.js';
import type { ExportedResource } from '../../src/export/resources.js';
import { parseManifestText } from '../../src/manifests/parse.js';
import { MAX_FILE_BYTES } from '../../src/util/limits.js';

const hook = (i: number): ExportedResource => {
  const name = `hook-${String(i).padStart(5, '0')}`;
  return {
    kind: 'Webhook',
    name,
    liveId: String(i),
    manifest: {
      apiVersion: 'govops/v1',
      kind: 'Webhook',
      metadata: { name },
      spec: { url: `https://hooks.example.com/team/${i}/notifications/endpoint`, global: false, notificationType: ['healthCheckFailed', 'healthCheckResolved'], actionType: 'triggered' },
    },
  };
};

/** Every manifest name the files hold, as the loader reads them (a file it refuses fails the test). */
function readBack(files: Map<string, string>): string[] {
  const names: string[] = [];
  for (const [file, text] of files) {
    const res = parseManifestText(text, file, '/tmp');
    expect(res.diagnostics, file).toEqual([]);
    names.push(...res.manifests.map((m) => m.manifest.metadata.name));
  }
  return names;
}

describe('export --layout kind of many resources', () => {
  it('splits a kind over several files, each under the loader size limit, every resource once and in order', () => {
    const hooks = Array.from({ length: 6000 }, (_, i) => hook(i));
    const files = renderExport(hooks, [], 'kind');
    const names = [...files.keys()];
    expect(names.length).toBeGreaterThan(1);
    expect(names).toEqual(names.map((_, i) => (i === 0 ? 'webhooks.yaml' : `webhooks-${i + 1}.yaml`)));
    for (const text of files.values()) expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(MAX_FILE_BYTES);
    expect(readBack(files)).toEqual(hooks.map((h) => h.name));
  });

  it('a file holds at most the documents the limit allows; a small export stays one file per kind', () => {
    const hooks = Array.from({ length: 7 }, (_, i) => hook(i));
    const files = renderExport(hooks, [], 'kind', { bytes: MAX_FILE_BYTES, documents: 3 });
    expect([...files.keys()]).toEqual(['webhooks.yaml', 'webhooks-2.yaml', 'webhooks-3.yaml']);
    expect([...files.values()].map((t) => t.match(/^kind: Webhook$/gm)!.length)).toEqual([3, 3, 1]);
    expect(readBack(files)).toEqual(hooks.map((h) => h.name));
    expect([...renderExport(hooks, [], 'kind').keys()]).toEqual(['webhooks.yaml']);
  });
});
