/**
 * Property tests (fast-check), for random manifest sets and random server behaviours, against the sandbox:
 * - the plan after a successful apply is all no-ops;
 * - applying twice changes nothing the second time (no write);
 * - nothing is deleted without --prune, and never anything outside govops state.
 * Runs are bounded (numRuns) and transitions short, so this stays a few seconds.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { behaviourSet, manifestSet, type GenManifest } from './arbitraries.js';
import { label, world, writesOf, type World } from './helpers.js';

let open: World[] = [];
afterEach(async () => {
  for (const w of open) await w.close();
  open = [];
});

async function applied(set: GenManifest[], behaviours: string[], seed: number): Promise<World> {
  let n = seed;
  const w = await world(behaviours, { random: () => ((n = (n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) });
  open.push(w);
  for (const m of set) {
    await w.write(`${m.name}.yaml`, m.text);
    Object.assign(w.env, m.env);
  }
  const first = await w.run();
  if (!first.ok) throw new Error(`apply failed under ${label(behaviours)}: ${first.error}\n${set.map((m) => m.text).join('\n---\n')}`);
  return w;
}

const describeSet = (set: GenManifest[], behaviours: string[]) => `${label(behaviours)}\n${set.map((m) => m.text).join('\n---\n')}`;

describe('properties (random manifests x random server behaviours)', () => {
  it('after a successful apply the plan is all no-ops, and a second apply writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(manifestSet(5), behaviourSet, fc.integer({ min: 1, max: 1000 }), async (set, behaviours, seed) => {
        const w = await applied(set, behaviours, seed);
        const plan = await w.run({ apply: false });
        const acting = plan.plan!.changes.filter((c) => c.action !== 'noop');
        expect(acting, describeSet(set, behaviours)).toEqual([]);
        w.sandbox.clearRequests();
        const second = await w.run();
        expect(second.ok, second.error).toBe(true);
        expect(writesOf(w.sandbox), describeSet(set, behaviours)).toEqual([]);
        await w.close();
        open = open.filter((x) => x !== w);
      }),
      { numRuns: 50 },
    );
  });

  it('nothing is deleted without --prune, and with it only resources in govops state', async () => {
    await fc.assert(
      fc.asyncProperty(
        manifestSet(4),
        behaviourSet,
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
        async (set, behaviours, seed, removed) => {
          const w = await applied(set, behaviours, seed);
          // a stranger of each kind govops did not create (not in state), one matching no manifest
          const stranger = await w.api.createIntegration({
            type: 'lakehouse',
            autoBootstrap: true,
            config: { workspaceUrl: 'https://stranger.example.com', httpPath: '/x', token: 't' },
          });
          const hook = await w.api.createWebhooks([
            { url: 'https://hooks.example.com/stranger', name: 'stranger', global: false, notificationType: ['modelCreated'], actionType: 'triggered' },
          ]);
          const owned = new Set((await w.state()).resources.map((r) => `${r.kind}/${r.id}`));
          const gone = set.filter((_, i) => removed[i]);
          for (const m of gone) await w.remove(`${m.name}.yaml`);
          w.sandbox.clearRequests();
          const noPrune = await w.run();
          expect(noPrune.ok, noPrune.error).toBe(true);
          expect(writesOf(w.sandbox).filter((r) => r.startsWith('DELETE')), describeSet(set, behaviours)).toEqual([]);
          w.sandbox.clearRequests();
          const pruned = await w.run({ prune: true });
          const deletes = writesOf(w.sandbox).filter((r) => r.startsWith('DELETE'));
          for (const d of deletes) {
            const [, kind, id] = /^DELETE \/(integrations|webhooks)\/(\S+)$/.exec(d)!;
            expect(owned.has(`${kind === 'integrations' ? 'Integration' : 'Webhook'}/${id}`), `${d} not in state`).toBe(true);
          }
          expect(pruned.plan!.changes.filter((c) => c.action === 'delete').map((c) => c.name).sort()).toEqual(gone.map((m) => m.name).sort());
          expect((await w.api.listIntegrations()).some((i) => i.id === stranger.id)).toBe(true);
          expect((await w.api.listWebhooks()).some((x) => x.id === hook.createdWebhooks[0]!.id)).toBe(true);
          await w.close();
          open = open.filter((x) => x !== w);
        },
      ),
      { numRuns: 20 },
    );
  });
});
