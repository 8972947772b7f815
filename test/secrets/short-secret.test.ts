/**
 * Issue 27: a secret shorter than the redaction minimum cannot be redacted (the redactor ignores it, or every
 * `abc` in every output would be replaced): resolution warns, at the reference, naming the reference only.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { sqlManifest } from '../apply/inproc.js';

describe('a secret too short to be redacted', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('sql.yaml', sqlManifest('warehouse', 'sql.example.com'));
    await h.writeManifest('sql2.yaml', sqlManifest('lake', 'sql2.example.com'));
  });
  afterAll(async () => {
    await h.close();
  });

  it('is a warning of plan at the reference, naming the reference and never the value', async () => {
    const r = await h.govops(['plan', 'manifests'], { GOVOPS_SECRET_SQL_PASSWORD: 'Zq', GOVOPS_SECRET_ADMIN_PASSWORD: 'long-enough-1' });
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout + r.stderr;
    expect(out).toMatch(
      /manifests\/sql\.yaml:\d+:\d+: .*spec\.config\.password: the secret \(fromEnv: GOVOPS_SECRET_SQL_PASSWORD\) is shorter than 4 characters: too short to be redacted/,
    );
    expect(out).not.toMatch(/ADMIN_PASSWORD\) is shorter/);
    // said once per secret, at its first reference, however many manifests name it
    expect(out.match(/GOVOPS_SECRET_SQL_PASSWORD\) is shorter/g)).toHaveLength(1);
    expect(out).not.toContain('Zq');
  });

  it('a long enough secret: no warning', async () => {
    const r = await h.govops(['plan', 'manifests'], { GOVOPS_SECRET_SQL_PASSWORD: 'long-enough-2', GOVOPS_SECRET_ADMIN_PASSWORD: 'long-enough-1' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/too short to be redacted/);
  });
});
