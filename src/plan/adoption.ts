/**
 * `--no-adopt` (pure). By default a manifest that matches, by natural key, a live resource govops does not own
 * adopts it (as Argo CD and Flux do; `export` relies on it), and once owned a later commit can replace or prune
 * it. Where manifest authors are less trusted than the operator, the guard keeps takeovers with the operator:
 * such a change is blocked (`adopt-not-allowed`), and nothing is registered under an integration govops does not
 * own. An adoption the operator recorded (`govops state adopt`, `export --state`) is still carried out; what
 * govops owns is planned as always.
 */
import type { Match } from './match.js';
import { blocked, type Blocked } from './notes.js';
import type { PlanOptions, ResourceChange, ResourceKind } from './types.js';

const NOUN: Record<ResourceKind, string> = { Integration: 'integration', Webhook: 'webhook', DataSource: 'data source' };

/**
 * The change, blocked when which live resource is its cannot be told (`identity-conflict`: two match its identity, or
 * the one that does is another manifest's), or when it adopts a live resource found by natural key under --no-adopt. This block replaces
 * any other (e.g. `replace-not-allowed`): no flag but the operator's adoption lets the change through.
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
