/**
 * Server behaviours: where the service interface is silent, the sandbox can take each plausible reading,
 * one switch at a time (`govops sandbox --behaviour omit-defaults,shuffle`, `startSandbox({ behaviours })`),
 * so govops is tested against every service it may meet, not only the sandbox's default reading.
 */
import { errorResponse, type Route } from './http.js';

export const BEHAVIOURS = {
  'omit-defaults': 'GET bodies leave out config fields whose value is the default (sent or not)',
  'echo-sent': 'GET bodies hold exactly the config fields the caller sent (no default filled in)',
  'null-unset': 'config fields without a value are given as null',
  'extra-fields': 'bodies carry fields govops does not know (server-side timestamps, versions, nested extras)',
  'numeric-ids': 'integration ids are numbers in every body (the interface shows strings in most)',
  'string-ids': 'webhook ids, createdBy, the status body id, data source ids and the integer ids of webhook history records are strings (the interface shows numbers), and the history count too (4.3: number or string)',
  'omit-masked': 'credential fields are left out of GET bodies instead of shown as ********',
  shuffle: 'lists (integrations, webhooks, notificationType, order-free config lists) come in random order',
  'validation-warning': 'successful validation reports a test with status warning (overall status warning)',
  'skip-creating': 'a create answers status enabled at once: no creating transition',
  'skip-editing': 'an update answers status enabled at once: no editing transition',
  'no-data-sources': 'the service has no data-source endpoints (404 on all of them), as a release without object-store data sources',
  'data-source-metadata': 'data source records (list, get) come as handler metadata: { id, name, metadata: { prefix, integrationId, dataSourceName } }',
  'hard-delete': 'the first DELETE of a data source removes it (default: the first disables it, the second removes it)',
  'reuse-ids': 'a new integration, webhook or data source gets the smallest id no live one has (ids of deleted items are given again)',
  'other-mask': 'credential fields are masked with other strings: [REDACTED] (username: ****) instead of ********',
  'mask-more': 'fields the interface does not name as credentials are masked too, partly: cloudAccessKeyId, accessKeyId, databaseUser, clientId and appId as their first 4 characters then ****',
  'lower-hosts': 'host names are stored lower-cased: config.host, the host of lakehouse workspaceUrl and okta.idpHost, of a webhook url',
  'list-lag': 'lists lag behind writes: an integration or webhook created or updated since the previous list of its kind is left out of the next one',
  '503-after-success': 'every create (POST /integrations, POST /webhooks, the data-source create) is carried out, then answered 503, as a gateway that gave up on a slow origin',
  '503-after-success-all': 'as 503-after-success, and every other write too (PUT and DELETE /integrations/{id}, DELETE /webhooks/{id}, the data-source delete): the first success at each path is carried out, then answered 503 (a re-sent write is answered as it is)',
  'unknown-statuses': 'transitions show statuses the interface does not list: pending (creating), updating (editing), removing (deleting)',
  'status-404-lag': 'the status endpoint answers 404 to the first two status requests of a new integration (a lagging replica); GET /integrations/{id} is current',
  'no-activity-id': 'webhook history records (the list and the retry answer) carry no webhooksActivityId',
  'dry-run-200-failed': 'a dry run whose validation fails answers 200 with validationResults.status failed and without the failing tests (instead of 422)',
} as const;

export type Behaviour = keyof typeof BEHAVIOURS;

/**
 * Under `503-after-success`, a create route's success is answered 503 (the resource stays created), as a gateway
 * that timed out on a slow origin answers; under `503-after-success-all`, so is the first success of each update
 * or delete at a path (the re-sent write, an idempotent PUT or a DELETE now finding 404, is answered as it is, or
 * a PUT would never be answered). Dry runs change nothing and are answered as they are.
 */
export function withLostCreateAnswers(routes: readonly Route[], behaviours: Behaviours): Route[] {
  const lostOnce = behaviours.memory.lostWrites;
  return routes.map((route) => {
    if (!route.creates && !route.writes) return route;
    const handler = route.handler.bind(route);
    return {
      ...route,
      handler: async (req) => {
        const out = await handler(req);
        if (out.status < 200 || out.status >= 300 || asksDryRun(req.query)) return out;
        const at = `${req.method} ${req.path}`;
        const lost = route.creates === true
          ? behaviours.has('503-after-success') || behaviours.has('503-after-success-all')
          : behaviours.has('503-after-success-all') && !lostOnce.has(at);
        if (lost && !route.creates) lostOnce.add(at);
        return lost ? errorResponse(503, 'Service Unavailable: the gateway gave up waiting (sandbox behaviour 503-after-success; the write was carried out)') : out;
      },
    };
  });
}

/** Whether a request is a dry run, read as the routes read `dryRun` (integrations/body.ts isDryRun): `true` in any case, or bare. */
function asksDryRun(query: URLSearchParams): boolean {
  const v = query.get('dryRun');
  return v !== null && (v === '' || v.toLowerCase() === 'true');
}

/** Pairs that cannot hold at once. */
const CONFLICTS: ReadonlyArray<readonly [Behaviour, Behaviour]> = [
  ['omit-defaults', 'echo-sent'],
  ['numeric-ids', 'string-ids'],
];

export function isBehaviour(name: string): name is Behaviour {
  return Object.hasOwn(BEHAVIOURS, name);
}

/** Parse `a,b` or a list into a set; throws on an unknown name or a conflicting pair. */
export function parseBehaviours(input: string | readonly string[] | undefined): ReadonlySet<Behaviour> {
  const names = (typeof input === 'string' ? input.split(',') : (input ?? [])).map((n) => n.trim()).filter((n) => n !== '' && n !== 'default');
  const out = new Set<Behaviour>();
  for (const n of names) {
    if (!isBehaviour(n)) throw new Error(`unknown behaviour "${n}": use ${Object.keys(BEHAVIOURS).join(', ')}`);
    out.add(n);
  }
  for (const [a, b] of CONFLICTS) {
    if (out.has(a) && out.has(b)) throw new Error(`behaviours ${a} and ${b} exclude each other`);
  }
  return out;
}

/** The wire name of an integration status under `unknown-statuses` (the stored status is unchanged). */
const UNLISTED: Readonly<Record<string, string>> = { creating: 'pending', editing: 'updating', deleting: 'removing' };

/** The behaviours in force, read by the views and routes (a mutable holder, so tests can switch them). */
export class Behaviours {
  private set: ReadonlySet<Behaviour>;

  constructor(
    input: string | readonly string[] | undefined,
    /** Random source for `shuffle`. */
    readonly random: () => number = Math.random,
  ) {
    this.set = parseBehaviours(input);
  }

  /**
   * What the behaviours remember of the requests so far: the writes whose first success was answered 503
   * (`503-after-success-all`, by `METHOD path`) and the status requests per integration id (`status-404-lag`).
   * Keyed by paths and ids, which start again at 1 after a reset, so a reset forgets it (`forget`).
   */
  readonly memory = { lostWrites: new Set<string>(), statusRequests: new Map<number, number>() };

  /** Forget what was remembered of earlier requests (the sandbox's state was reset). */
  forget(): void {
    this.memory.lostWrites.clear();
    this.memory.statusRequests.clear();
  }

  has(b: Behaviour): boolean {
    return this.set.has(b);
  }

  list(): Behaviour[] {
    return [...this.set].sort();
  }

  replace(input: string | readonly string[]): void {
    this.set = parseBehaviours(input);
  }

  /** An integration status as the wire shows it (`unknown-statuses` renames the transitional ones). */
  status(status: string): string {
    return this.set.has('unknown-statuses') ? (UNLISTED[status] ?? status) : status;
  }

  /** A shuffled copy when `shuffle` is on, else the list itself. */
  order<T>(list: readonly T[]): T[] {
    const out = [...list];
    if (!this.set.has('shuffle')) return out;
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}
