/**
 * Behaviours 503-after-success(-all): "Dry runs change nothing and are answered as they are". The sandbox reads
 * `dryRun` as the interface's boolean (`true` in any case, or the bare `?dryRun`), but the behaviour recognised only
 * the exact text `true`: a dry run written `?dryRun=TRUE` or `?dryRun` was answered 503 "the write was carried out"
 * although nothing was, and under -all it used up the path's one lost answer, so the real update after it was
 * answered as it is and the lost answer never reached the client.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { bodyFor, call, settle, start } from './harness.js';

let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.close();
  sb = undefined;
});

describe('lost answers leave dry runs alone, however dryRun is written', () => {
  it.each(['dryRun=TRUE', 'dryRun=True', 'dryRun'])('503-after-success: POST /integrations?%s answers the dry run (200), nothing created', async (q) => {
    sb = await start({ behaviours: ['503-after-success'], transitionMs: 20 });
    const r = await call(sb, 'POST', `/integrations?${q}`, { body: bodyFor('sql_analytics') });
    expect(r.status, r.text).toBe(200);
    expect(r.body.status).toBe('dryRun');
    expect((await call(sb, 'GET', '/integrations')).body).toEqual([]);
  });

  it('503-after-success-all: a dry-run PUT (?dryRun=TRUE) does not use up the path\'s lost answer; the real PUT gets it', async () => {
    sb = await start({ behaviours: ['503-after-success-all'], transitionMs: 20 });
    const body = bodyFor('sql_analytics');
    const created = await call(sb, 'POST', '/integrations', { body });
    expect(created.status).toBe(503);
    const id = (await call(sb, 'GET', '/integrations')).body[0].id as string;
    expect(await settle(sb, id)).toBe('enabled');
    const edit = { ...body, config: { ...(body.config as object), schema: 'other' } };
    const dry = await call(sb, 'PUT', `/integrations/${id}?dryRun=TRUE`, { body: edit });
    expect(dry.status, dry.text).toBe(200);
    const real = await call(sb, 'PUT', `/integrations/${id}`, { body: edit });
    expect(real.status, real.text).toBe(503);
  });
});
