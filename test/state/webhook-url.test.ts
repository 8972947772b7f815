/**
 * A webhook's url is a credential when its query carries a token (`?access_token=`) or its path is one (a chat
 * webhook: Slack, Discord, Teams, Mattermost): the state (file, journal, PostgreSQL rows) records the webhook's
 * identity by a keyed fingerprint of its url (HMAC-SHA256 under the state's key), never the url itself; a state
 * written before (the url in clear) is read as the same identity and keeps its ownership.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from '../apply/harness.js';
import { loadState } from '../../src/state/store.js';
import { webhookIdentity } from '../../src/service/kinds.js';
import { withStateKey } from '../../src/state/location.js';
import { postgresPerFile, psql } from '../helpers/postgres.js';

const TOKEN = 'xoxb1n0tAr3alT0kenZ9q8w7e6r5t';
const URL_WITH_TOKEN = `https://hooks.example.com/notify?access_token=${TOKEN}`;
const CHAT_TOKEN = 'Qw3rTy7U1oP9aSdF5gHjK2lZ';
const CHAT_URL = `https://hooks.slack.com/services/T0000/B0000/${CHAT_TOKEN}`;

const manifest = (name: string, url: string): string =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: ${url}\n  global: true\n  notificationType: [healthCheckFailed]\n  actionType: triggered\n`;

const pg = postgresPerFile();
let h: Harness;
beforeAll(async () => {
  h = await harness();
  await mkdir(path.join(h.dir, 'manifests'), { recursive: true });
  await h.writeManifest('hooks.yaml', `${manifest('alerts', URL_WITH_TOKEN)}---\n${manifest('chat', CHAT_URL)}`);
});
afterAll(async () => h.close());

async function stateTexts(file: string): Promise<string> {
  const read = (f: string) => readFile(f, 'utf8').catch(() => '');
  return `${await read(file)}${await read(`${file}.journal`)}`;
}

describe('the state records a webhook url only by its keyed fingerprint', () => {
  it('a state file (and its journal): apply, then plan and state show still know the webhooks as govops own', async () => {
    const applied = await h.govops(['apply', 'manifests']);
    expect(applied.code, applied.stderr).toBe(0);
    const text = await stateTexts(h.statePath);
    expect(text).toContain('"alerts"');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(CHAT_TOKEN);
    // version 2: a govops that reads only version 1 (the url in clear) refuses it, rather than forgetting the webhooks
    expect(JSON.parse(await readFile(h.statePath, 'utf8')).version).toBe(2);
    const planned = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.stderr).not.toContain('stale');
    const shown = await h.govops(['state', 'show', 'Webhook/alerts', '-o', 'json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).not.toContain(TOKEN);
  });

  it('a state written by an older govops (the url in clear) keeps its ownership and is rewritten without the url', async () => {
    const state = await loadState(h.statePath);
    // what the previous release wrote: the identity as [name, url]
    const old = { ...state, version: 1, resources: state.resources.map((r) => (r.kind === 'Webhook' ? { ...r, identity: webhookIdentity(r.name, r.name === 'alerts' ? URL_WITH_TOKEN : CHAT_URL) } : r)) };
    await writeFile(h.statePath, JSON.stringify(old, null, 2));
    expect(await readFile(h.statePath, 'utf8')).toContain(TOKEN);
    const planned = await h.govops(['plan', 'manifests', '--detailed-exitcode']);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.stderr).not.toContain('stale');
    const loaded = await loadState(h.statePath);
    expect(JSON.stringify(loaded)).not.toContain(TOKEN);
    expect(loaded.resources.find((r) => r.name === 'alerts')?.origin).toBe('created');
    // the next save (any apply) writes it without the url
    const applied = await h.govops(['apply', 'manifests']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(await stateTexts(h.statePath)).not.toContain(TOKEN);
    expect(JSON.parse(await readFile(h.statePath, 'utf8')).version).toBe(2);
  });

  it('a state of a version this govops does not know is refused with its version, not read', async () => {
    const state = JSON.parse(await readFile(h.statePath, 'utf8'));
    await writeFile(h.statePath, JSON.stringify({ ...state, version: 3 }));
    const planned = await h.govops(['plan', 'manifests']);
    expect(planned.code).toBe(1);
    expect(planned.stderr).toMatch(/has version 3; this govops reads versions 1 and 2/);
    await writeFile(h.statePath, JSON.stringify(state));
  });

  it('a PostgreSQL state: the rows hold no url, and an older row with the url in clear is read as the same identity', async () => {
    const url = withStateKey(pg.url, 'hooks');
    const applied = await h.govops(['apply', 'manifests', '--state', url]);
    expect(applied.code, applied.stderr).toBe(0);
    const rows = psql(pg, `SELECT body::text FROM govops.resources WHERE key = 'hooks'`);
    expect(rows).toContain('alerts');
    expect(rows).not.toContain(TOKEN);
    expect(rows).not.toContain(CHAT_TOKEN);
    expect(psql(pg, `SELECT version FROM govops.states WHERE key = 'hooks'`)).toBe('2');
    // what the previous release wrote: the identity as [name, url]
    const old = webhookIdentity('alerts', URL_WITH_TOKEN).replaceAll("'", "''");
    psql(pg, `UPDATE govops.states SET version = 1 WHERE key = 'hooks'`);
    psql(pg, `UPDATE govops.resources SET body = jsonb_set(body, '{identity}', to_jsonb('${old}'::text)) WHERE key = 'hooks' AND name = 'alerts'`);
    expect(psql(pg, `SELECT body::text FROM govops.resources WHERE key = 'hooks'`)).toContain(TOKEN);
    const planned = await h.govops(['plan', 'manifests', '--detailed-exitcode', '--state', url]);
    expect(planned.code, planned.stdout + planned.stderr).toBe(0);
    expect(planned.stderr).not.toContain('stale');
    expect(JSON.stringify(await loadState(url))).not.toContain(TOKEN);
  });
});

describe('PostgreSQL state keys: one key never reads or writes another key\'s rows', () => {
  const res = (name: string) => ({ kind: 'Integration' as const, name, id: `id-${name}`, origin: 'created' as const, specHash: 'h', secretFingerprints: {}, updatedAt: new Date(0).toISOString() });
  it('keys that would match each other as LIKE patterns are kept apart; quotes, % and non-ASCII are refused before any query', async () => {
    const { newState, saveState } = await import('../../src/state/store.js');
    // `_` matches any character in a LIKE pattern: every query compares keys with = (parameters), never LIKE
    await saveState(withStateKey(pg.url, 'team_a'), { ...newState(), resources: [res('of-underscore')] });
    await saveState(withStateKey(pg.url, 'teamXa'), { ...newState(), resources: [res('of-x')] });
    expect((await loadState(withStateKey(pg.url, 'team_a'))).resources.map((r) => r.name)).toEqual(['of-underscore']);
    expect((await loadState(withStateKey(pg.url, 'teamXa'))).resources.map((r) => r.name)).toEqual(['of-x']);
    expect((await loadState(withStateKey(pg.url, 'team'))).resources).toEqual([]);
    for (const key of ["team_a' OR '1'='1", 'team%', 'team\u0430', 'team_a\u0000', '%']) {
      await expect(loadState(withStateKey(pg.url, key))).rejects.toMatchObject({ message: expect.stringContaining('is not valid') });
    }
    expect(psql(pg, `SELECT count(*) FROM govops.states WHERE key LIKE 'team%'`)).toBe('2');
  });
});
