/**
 * A config value that is a plain word such as `sensitive` or `secret` (a schema, a catalog, a group named so) is
 * that value, not one the service hides: a drift to it is seen, and a difference from it is a change.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rig, sqlManifest, type Rig } from '../apply/inproc.js';
import { looksMasked } from '../../src/service/kinds.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const SECRETS = { GOVOPS_SECRET_SQL_PASSWORD: 'pw-words-1', GOVOPS_SECRET_ADMIN_PASSWORD: 'adm-words-2' };

describe('plain words are values', () => {
  it('looksMasked: a bracketed word, or the bare word REDACTED, is hidden; a bare name such as sensitive is not', () => {
    for (const v of ['[REDACTED]', '<hidden>', '(masked)', 'REDACTED', ' [secret] ', '{sensitive}']) expect(looksMasked(v), v).toBe(true);
    for (const v of ['sensitive', 'SENSITIVE', 'secret', 'Hidden', 'masked']) expect(looksMasked(v), v).toBe(false);
  });

  it('sql_analytics schema changed in the service to "sensitive": the plan sees the drift and updates it back', async () => {
    r = await rig();
    Object.assign(r.env, SECRETS);
    await r.write('sql.yaml', sqlManifest('sql', 'sql.example.com'));
    expect((await r.run()).ok).toBe(true);
    const id = (await r.state()).resources[0]!.id;
    const live = (await r.api.listIntegrations())[0]!;
    await r.api.updateIntegration(id, { type: 'sql_analytics', autoBootstrap: true, config: { ...live.config, schema: 'sensitive', username: 'svc', password: 'pw-words-1' } });
    const planned = await r.run({ apply: false });
    expect(planned.plan!.changes.map((c) => [c.action, c.changes.map((f) => [f.path, f.before, f.after])])).toEqual([['update', [['config.schema', 'sensitive', 'views']]]]);
  });
});
