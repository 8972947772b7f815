/**
 * A manifest's author writes a literal credential holding a lone surrogate (`"\ud800…"` is valid YAML). The
 * redactor worked out its URL-encoded forms with encodeURIComponent, which throws on it (URIError), so every output
 * of the run threw: `govops plan` ended in an uncaught `URI malformed` instead of its plan.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../api/server.js';
import { manifestFolder, PASSWORD_MANIFEST, startAnsweringService, type ManifestFolder } from '../helpers/answering-service.js';

describe('a literal credential holding a lone surrogate', () => {
  let service: TestServer;
  let folder: ManifestFolder;
  beforeAll(async () => {
    service = await startAnsweringService(() => ({ status: 200, json: [] }));
    folder = await manifestFolder({ 'columnar.yaml': PASSWORD_MANIFEST.replace('{ fromEnv: GOVOPS_SECRET_PW }', '"\\ud800-lone-surrogate"') });
  });
  afterAll(async () => {
    await service.close();
    await folder.close();
  });

  it('govops plan plans it, and prints no URIError', async () => {
    const r = await folder.govops(['plan', 'manifests'], { GOVOPS_URL: service.url, GOVOPS_TOKEN: 'token-of-the-run' });
    const all = r.stdout + r.stderr;
    expect(all).not.toMatch(/URIError|URI malformed/);
    expect(r.code, all).toBe(0);
    expect(all).toContain('Plan: 1 to create');
  });
});
