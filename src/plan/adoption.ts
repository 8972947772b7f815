/**
 * `--no-adopt` (pure). By default a manifest that matches, by natural key, a live resource govops does not own
 * adopts it (as Argo CD and Flux do; `export` relies on it), and once owned a later commit can replace or prune
 * it. Where manifest authors are less trusted than the operator, the guard keeps takeovers with the operator:
 * such a change is blocked (`adopt-not-allowed`), and nothing is registered under an integration govops does not
 * own. An adoption the operator recorded (`govops state adopt`, `export --state`) is still carried out; what
 * govops owns is planned as always.
 */
import type { Match } from './match.js';
import { heldCreate } from './held-create.js';
import { blocked, type Blocked } from './notes.js';
import type { PlanOptions, ResourceChange, ResourceKind } from './types.js';

const NOUN: Record<ResourceKind, string> = { Integration: 'integration', Webhook: 'webhook', DataSource: 'data source' };

/**
 * The change, blocked when which live resource is its cannot be told (`identity-conflict`: two match its identity, or
 * the one that does is another manifest's), or when it adopts a live resource found by natural key under --no-adopt.
 * This block replaces any other (e.g. `replace-not-allowed`): no flag but the operator's adoption lets it through.
 */
export function guardAdoption(c: ResourceChange, m: Match<{ id: string }>, options: PlanOptions): ResourceChange {
  // Which live resource is its cannot be told (the plan has the error): not a create, which would make one more
  if (m.conflict !== undefined) {
    c.blocked = blocked('identity-conflict', `${m.conflict}; until then nothing is created, adopted or changed for it`);
    return c;
  }
  if (!options.noAdopt || !c.adopt || m.explicitAdopt || !m.live) return c;
  const ref = `${c.resourceKind}/${c.name}`;
  c.blocked = blocked(
    'adopt-not-allowed',
    `not adopted (--no-adopt): live ${NOUN[c.resourceKind]} ${m.live.id} matches this manifest and govops does not own it. ` +
      `To manage it, the operator runs govops state adopt ${ref} --id ${m.live.id} and applies, or applies once without --no-adopt`,
  );
  return c;
}

/**
 * Under --no-adopt, why a data-source create waits: its integration is live but not one govops owns (its adoption
 * blocked, or suspended before it was adopted). Undefined when it may go ahead.
 */
export function unownedIntegration(c: ResourceChange, ownedIds: ReadonlySet<string>, options: PlanOptions): Blocked | undefined {
  const name = c.integration?.name;
  const id = c.integration?.liveId;
  // a create, or a replace that registers it under another integration (the manifest moved it there)
  const registers = c.action === 'create' || (c.action === 'replace' && c.changes.some((f) => f.path === 'integration'));
  if (!options.noAdopt || !registers || name === undefined || id === undefined || ownedIds.has(id)) return undefined;
  return blocked(
    'waits-for-integration',
    `Integration/${name} (id ${id}) is not owned by govops and --no-adopt leaves it so: nothing is registered under it ` +
      `(the operator adopts it with govops state adopt Integration/${name} --id ${id})`,
  );
}

/**
 * A webhook's create that waits for an earlier one: that create was sent, got no answer, and the service does not list
 * it yet (plan/pending.ts keeps its intent pending for WEBHOOK_CREATE_HOLD_MS). Sent again now, the service could hold
 * two (nothing in it refuses a second webhook of the same name and url): blocked (`create-unsettled`) until it is
 * listed (then recorded as govops') or the hold has passed (then created again).
 */
export function guardUnsettledCreate(c: ResourceChange, m: Match<{ id: string }>, now: number | undefined): ResourceChange {
  const until = m.state ? heldCreate(m.state, now) : undefined;
  if (c.action !== 'create' || c.blocked || until === undefined) return c;
  c.blocked = blocked(
    'create-unsettled',
    `a create of it sent at ${m.state!.updatedAt} got no answer and the service does not list it yet: it is not sent ` +
      `again before ${until} (a second one would be a duplicate); if it is listed by then, it is recorded as govops'`,
  );
  return c;
}
