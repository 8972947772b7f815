/**
 * `plan -o markdown` is the pull-request comment of a CI job: a manifest's own warnings (an unknown annotation, advice)
 * went to stderr only, so a reviewer reading the comment never saw them. They are in the comment now, and on stderr
 * as before.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { objectStoreManifest } from '../helpers/manifests.js';

let h: Harness;
beforeAll(async () => {
  h = await harness({ transitionMs: 10 });
  await mkdir(path.join(h.dir, 'manifests'));
});
afterAll(async () => {
  await h.close();
});

describe('plan and apply -o markdown and the manifests warnings', () => {
  it('a manifest warning is in the comment, at file:line:col, and still on stderr', async () => {
    await h.writeManifest('store.yaml', objectStoreManifest('raw', 's3://raw.example.com/').replace('metadata:\n', 'metadata:\n  annotations:\n    govops/suspnd: "true"\n'));
    const md = await h.govops(['plan', 'manifests', '-o', 'markdown']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^> \*\*Warning:\*\* `manifests\/store\.yaml:\d+:\d+` Integration\/raw: unknown govops annotation \\`govops\/suspnd\\`/m);
    expect(md.stderr).toMatch(/manifests\/store\.yaml:\d+:\d+: warning: Integration\/raw: unknown govops annotation `govops\/suspnd`/);
    // the text plan is unchanged: its warnings stay on stderr
    const text = await h.govops(['plan', 'manifests']);
    expect(text.stdout).not.toMatch(/suspnd/);
  });

  it('the same for apply -o markdown, whose comment starts with the plan it applied', async () => {
    const md = await h.govops(['apply', 'manifests', '-o', 'markdown']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^> \*\*Warning:\*\* `manifests\/store\.yaml:\d+:\d+` Integration\/raw: unknown govops annotation \\`govops\/suspnd\\`/m);
    expect(md.stdout).toMatch(/Integration\/raw/);
  });
});
