/**
 * Interface 2.1: seven kinds, the labels written out here from the interface. The sandbox takes its kinds from
 * govops' registry (INTEGRATION_TYPES), so a kind added there, or one dropped, was shared by both: the sandbox's
 * conformance tests loop over that same registry. Each of the seven is taken (a dry-run create) and the refusal of
 * another type names exactly these seven.
 */
import { describe, expect, it } from 'vitest';
import { bodyFor, call, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

const INTERFACE_KINDS = ['object_store', 'sql_analytics', 'lakehouse', 'dataset_warehouse', 'columnar_warehouse', 'cloud_warehouse', 'distributed_sql'];

describe('integration kinds of interface 2.1', () => {
  it.each(INTERFACE_KINDS)('%s is taken', async (kind) => {
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: bodyFor(kind) });
    expect(r.status, r.text).toBe(200);
  });

  it('another type is refused, naming exactly the seven kinds', async () => {
    const r = await call(box.sb, 'POST', '/integrations?dryRun=true', { body: { type: 'warehouse', autoBootstrap: false, config: {} } });
    expect(r.status).toBe(400);
    const listed = /type must be one of (.*)$/.exec(r.body.message as string)?.[1]?.split(', ') ?? [];
    expect(listed.sort()).toEqual([...INTERFACE_KINDS].sort());
  });
});
