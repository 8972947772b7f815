/**
 * `apply PLANFILE` where a change the saved plan has is blocked now: the refusal says which change and why (the
 * block's code and message), as the other stale-plan causes do, not only that "the change computed now differs".
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import { harness } from './harness.js';
import { objectStoreManifest } from '../helpers/manifests.js';

it('a create whose unique cloudLocationPath someone took since the plan: refused naming value-taken and the holder', async () => {
  const h = await harness({ transitionMs: 20 });
  try {
    await mkdir(path.join(h.dir, 'manifests'));
    await h.writeManifest('raw.yaml', objectStoreManifest('raw', 's3://raw.example.com/'));
    const planned = await h.govops(['plan', 'manifests', '--out', 'plan.json']);
    expect(planned.code, planned.stderr).toBe(0);
    // another team creates an object_store integration at the same location meanwhile
    const taken = await fetch(`${h.sandbox.url}/integrations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: h.sandbox.adminToken },
      body: JSON.stringify({
        type: 'object_store',
        autoBootstrap: false,
        config: { name: 'team-raw', cloudAccountId: '123456789012', cloudRegion: 'us-east-1', cloudLocationRole: 'arn:cloud:iam::123456789012:role/team', cloudLocationPath: 's3://raw.example.com/', authenticationType: 'auto' },
      }),
    });
    expect(taken.status).toBe(200);
    const { id } = (await taken.json()) as { id: string };
    const res = await h.govops(['apply', 'plan.json']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('the saved plan plan.json is stale; nothing was applied');
    // the old code: "Integration/raw: the change computed now differs from the saved one"
    expect(res.stderr).toContain(`Integration/raw: blocked now (value-taken): config.cloudLocationPath \`s3://raw.example.com/\` is used by integration ${id}`);
  } finally {
    await h.close();
  }
});
