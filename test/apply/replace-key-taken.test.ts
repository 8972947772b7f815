/**
 * A replace whose new natural key another live integration holds (one govops does not own): the service refuses the
 * create half with 409 (interface 7, "an integration already exists on the host"), so deleting the old one first
 * leaves the manifest with no integration at all. It is blocked in the plan, as a taken unique value is
 * (plan/unique-taken.ts), and nothing is deleted.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rig, sqlManifest, type Rig } from './inproc.js';

let r: Rig;
beforeEach(async () => {
  r = await rig();
  Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222' });
});
afterEach(async () => {
  await r.close();
});

/**
 * govops' `sql` on one.example.com, another team's integration on two.example.com, and the manifest moved to
 * two.example.com (a replace onto the holder's key); the requests cleared. Returns the holder.
 */
async function ownedThenTakenHost() {
  await r.write('a.yaml', sqlManifest('sql', 'one.example.com'));
  expect((await r.run()).ok).toBe(true);
  const theirs = await r.api.createIntegration({
    type: 'sql_analytics',
    autoBootstrap: false,
    config: { host: 'two.example.com', database: 'theirs', schema: 'theirs', username: 'them', password: 'their-pw' },
  });
  r.sandbox.finishTransitions();
  await r.write('a.yaml', sqlManifest('sql', 'two.example.com'));
  r.sandbox.clearRequests();
  return theirs;
}

describe('a replace onto a natural key another integration holds', () => {
  it('is blocked in the plan naming the holder; the old integration is not deleted, the holder not touched', async () => {
    const theirs = await ownedThenTakenHost();
    const res = await r.run({ allowReplace: true });
    const c = res.plan!.changes.find((x) => x.name === 'sql')!;
    expect(c.action).toBe('replace');
    expect(c.blocked?.code).toBe('value-taken');
    expect(c.blocked?.message).toContain(`integration ${theirs.id}`);
    expect(r.lines().filter((l) => !l.startsWith('GET'))).toEqual([]);
    expect((await r.api.getIntegration('1')).config.host).toBe('one.example.com');
    expect((await r.api.getIntegration(theirs.id)).config.database).toBe('theirs');
    expect((await r.state()).resources.map((e) => [e.name, e.id])).toEqual([['sql', '1']]);
  });
});

describe('a replace onto a natural key another integration took since the plan (a lagging list left it out)', () => {
  beforeEach(async () => {
    await r.close();
    r = await rig({ behaviours: ['list-lag'] });
    Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-AAAA-1111', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-BBBB-2222' });
  });

  it('the dry run of the replacement finds the holder: nothing deleted, the failure names it', async () => {
    const theirs = await ownedThenTakenHost();
    const res = await r.run({ allowReplace: true });
    expect(res.ok).toBe(false);
    const o = res.outcomes.find((x) => x.name === 'sql')!;
    expect(o).toMatchObject({ action: 'replace', result: 'failed', code: 'GOVOPS_ALREADY_EXISTS' });
    expect(o.error).toContain(`integration ${theirs.id}`);
    expect(o.error).toContain('integration 1 not deleted');
    expect(r.lines().filter((l) => l.startsWith('DELETE') || l.startsWith('PUT'))).toEqual([]);
    expect((await r.api.getIntegration('1')).config.host).toBe('one.example.com');
    expect((await r.state()).resources.map((e) => [e.name, e.id])).toEqual([['sql', '1']]);
  });
});
