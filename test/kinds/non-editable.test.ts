/**
 * A non-editable attribute the manifest writes otherwise than the service holds it, with the same meaning (a host in
 * another case): not a change, and an update of another field must not send the new spelling, which a service that
 * compares what it stored with what it is sent takes for a change of the attribute (400).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rig, sqlManifest, type Rig } from '../apply/inproc.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe('a host written in another case beside a real change', () => {
  it('sql_analytics: the port update is applied (the host keeps its live spelling), and the plan after is a no-op', async () => {
    r = await rig();
    Object.assign(r.env, { GOVOPS_SECRET_SQL_PASSWORD: 'pw-case-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-case-2' });
    await r.write('sql.yaml', sqlManifest('sql', 'sql.example.com'));
    expect((await r.run()).ok).toBe(true);
    await r.write('sql.yaml', sqlManifest('sql', 'SQL.Example.com', { port: 1500 }));
    const planned = await r.run({ apply: false });
    expect(planned.plan!.changes.map((c) => [c.name, c.action, c.changes.map((f) => f.path)])).toEqual([['sql', 'update', ['config.port']]]);
    const applied = await r.run();
    expect(applied.ok, applied.error).toBe(true);
    const live = (await r.api.listIntegrations())[0]!;
    expect(live.config).toMatchObject({ host: 'sql.example.com', port: 1500 });
    const after = await r.run({ apply: false });
    expect(after.plan!.changes.filter((c) => c.action !== 'noop')).toEqual([]);
  });
});
