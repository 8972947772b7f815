/**
 * A manifest whose live resource cannot be told (two match its identity, or the one that does is another manifest's):
 * the plan has an error, and the change is blocked (`identity-conflict`), never a create. A create there would make
 * one more such resource once the error went away some other way, and the text plan said "once they are fixed, govops
 * would create it" where it would adopt the survivor.
 */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import { renderText } from '../../src/plan/render-text.js';
import { KEY, SHAPES, integration, liveOf, liveWebhookOf, owned, webhook } from './fixtures.js';

const config = (host: string) => ({ host, database: 'd', authenticationType: 'userPassword', username: 'u', password: 'p', port: 5439 });
const state = (resources: ReturnType<typeof owned>[] = []) => ({ version: 2 as const, fingerprintKey: KEY, resources });
const options = { prune: false, allowReplace: false };

describe('identity conflicts are blocked changes, not creates', () => {
  it('two live integrations match the manifest', () => {
    const a = integration('a', 'columnar_warehouse', config('h.example.com'));
    const p = planChanges({ desired: [a], live: { integrations: [liveOf(a, '1'), liveOf(a, '2')], webhooks: [] }, state: state(), options, shapes: SHAPES });
    expect(p.errors.join('\n')).toMatch(/2 live resources match its identity .*ids 1, 2/);
    expect(p.changes.map((c) => [c.name, c.action, c.blocked?.code])).toEqual([['a', 'create', 'identity-conflict']]);
    expect(renderText(p)).toMatch(/! blocked: Integration\/a: 2 live resources match its identity .*until then nothing is created, adopted or changed for it/);
  });

  it('two live webhooks of its name', () => {
    const h = webhook('h');
    const p = planChanges({ desired: [h], live: { integrations: [], webhooks: [liveWebhookOf(h, '7'), { ...liveWebhookOf(h, '8'), createdBy: 2 }] }, state: state(), options, shapes: SHAPES });
    expect(p.errors.join('\n')).toMatch(/Webhook\/h: 2 live resources match/);
    expect(p.changes.map((c) => [c.name, c.action, c.blocked?.code])).toEqual([['h', 'create', 'identity-conflict']]);
  });

  it('the live integration of its identity is another manifest\'s (moved to another host in the same commit)', () => {
    const b = integration('b', 'columnar_warehouse', config('old.example.com'));
    const bMoved = integration('b', 'columnar_warehouse', config('new.example.com'));
    const a = integration('a', 'columnar_warehouse', config('old.example.com'));
    const p = planChanges({ desired: [a, bMoved], live: { integrations: [liveOf(b, '1')], webhooks: [] }, state: state([owned(b, '1')]), options, shapes: SHAPES });
    expect(p.errors.join('\n')).toMatch(/Integration\/a and Integration\/b both match live id 1/);
    const a1 = p.changes.find((c) => c.name === 'a')!;
    expect([a1.action, a1.blocked?.code]).toEqual(['create', 'identity-conflict']);
  });
});
