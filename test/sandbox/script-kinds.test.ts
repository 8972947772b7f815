/**
 * The "Kinds" column of the script endpoint table (interface 4.1), every kind against every endpoint, written from
 * the interface document: the sandbox takes its kinds from govops' registry (SCRIPT_KINDS), so a kind added to or
 * left out of a phase there would be shared by both and seen only here. A refusal must be for the kind (not for a
 * missing cleanup or an autoBootstrap): post-cleanup is asked after a cleanup of the same configuration, where the
 * kind has one.
 */
import { describe, expect, it } from 'vitest';
import { KINDS, bodyFor, call, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

/** A body for the manual flow: autoBootstrap false and a config (distributed_sql: an empty one). */
const manual = (kind: string): Record<string, unknown> =>
  kind === 'distributed_sql' ? { type: kind, autoBootstrap: false, config: {} } : bodyFor(kind, 1, { autoBootstrap: false });

const ACCEPTS: Record<string, readonly string[]> = {
  create: ['sql_analytics', 'lakehouse', 'columnar_warehouse', 'cloud_warehouse'],
  'initial-create': ['sql_analytics', 'columnar_warehouse'],
  edit: ['sql_analytics', 'lakehouse', 'columnar_warehouse', 'cloud_warehouse'],
  delete: ['sql_analytics', 'columnar_warehouse', 'cloud_warehouse'],
  cleanup: ['sql_analytics', 'columnar_warehouse', 'cloud_warehouse'],
  'post-cleanup': ['sql_analytics'],
};

const CASES = Object.entries(ACCEPTS).flatMap(([phase, kinds]) => KINDS.map((kind): [string, string, boolean] => [phase, kind, kinds.includes(kind)]));

describe('interface 4.1 script table: which kinds each script endpoint takes', () => {
  it.each(CASES)('scripts/%s for %s: accepted %s', async (phase, kind, accepted) => {
    let path = `/integrations/scripts/${phase}`;
    if (phase === 'edit' || phase === 'delete') {
      const c = await call(box.sb, 'POST', '/integrations', { body: manual(kind) });
      expect(c.status, c.text).toBe(200);
      path = `/integrations/${c.body.id}/scripts/${phase}`;
    }
    if (phase === 'post-cleanup' && ACCEPTS.cleanup!.includes(kind)) {
      const cleanup = await call(box.sb, 'POST', '/integrations/scripts/cleanup', { body: manual(kind) });
      expect(cleanup.status, cleanup.text).toBe(200);
    }
    const r = await call(box.sb, 'POST', path, phase === 'delete' ? {} : { body: manual(kind) });
    if (accepted) {
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/plain/);
    } else {
      expect(r.status, r.text).toBe(400);
      expect(r.body.message).toMatch(/accepts only these types/);
    }
  });
});
