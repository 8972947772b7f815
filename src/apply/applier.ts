/**
 * applyPlan: carry out a plan. Each resource is independent (one failure never stops the others),
 * run with p-queue at `concurrency`; state is saved after each resource (saves are serialised);
 * an abort signal stops new work while in-flight calls finish.
 */
import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { ServiceApi } from '../api/client-types.js';
import type { IntegrationBody, WebhookInput } from '../api/types.js';
import type { DesiredIntegration, DesiredResource, DesiredWebhook, Plan, ResourceChange } from '../plan/types.js';
import type { ResourceOutcome } from '../reconcile/types.js';
import { getResource, putResource, removeResource } from '../state/store.js';
import type { GovopsState, ManagedResource } from '../state/types.js';
import { createIntegration, deleteIntegration, updateIntegration, type OpContext } from './integration.js';
import { ApplyFailure } from './validation.js';
import { createWebhooks, deleteWebhook } from './webhooks.js';

export interface ApplyInput {
  api: ServiceApi;
  plan: Plan;
  /** The resolved manifests the plan was made from (bodies with secrets). */
  desired: DesiredResource[];
  state: GovopsState;
  /** Save the state (called after each resource, never concurrently). */
  persist(state: GovopsState): Promise<void>;
  logger: Logger;
  concurrency?: number;
  /** Overall timeout in ms (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  revision?: string;
  pollIntervalMs?: number;
  pollMaxIntervalMs?: number;
  onOutcome?: (outcome: ResourceOutcome, done: number, total: number) => void;
  now?: () => Date;
}

export interface ApplyResult {
  outcomes: ResourceOutcome[];
  state: GovopsState;
  ok: boolean;
}

export const DEFAULT_CONCURRENCY = 8;
export const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/** Changes apply acts on: everything but plain no-ops. */
export function actionable(plan: Plan): ResourceChange[] {
  return plan.changes.filter((c) => c.action !== 'noop' || c.adopt || c.renamedFrom !== undefined);
}

export function actionLabel(c: ResourceChange): string {
  if (c.action === 'noop' && c.renamedFrom) return 'rename';
  return c.adopt && c.action !== 'adopt' ? `adopt+${c.action}` : c.action;
}

const integrationBody = (d: DesiredIntegration): IntegrationBody => structuredClone(d.body);
const webhookInput = (d: DesiredWebhook): WebhookInput => structuredClone(d.body);

export async function applyPlan(input: ApplyInput): Promise<ApplyResult> {
  const { api, plan, logger } = input;
  if (plan.errors.length > 0) throw new Error(`the plan has errors; nothing applied: ${plan.errors.join('; ')}`);
  const now = input.now ?? (() => new Date());
  const desired = new Map(input.desired.map((d) => [`${d.kind}/${d.name}`, d]));
  const changes = actionable(plan);
  const total = changes.length;
  const outcomes: ResourceOutcome[] = [];
  let state = input.state;
  const ctx: OpContext = {
    api,
    poll: {
      deadline: Date.now() + (input.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      initialMs: input.pollIntervalMs ?? 100,
      maxMs: input.pollMaxIntervalMs ?? 5000,
    },
  };

  // Saves never overlap; calls made while one is running share the next one, which writes the state as it
  // is when it starts (so every resource recorded before it). Large applies don't write once per resource.
  let saving: Promise<void> = Promise.resolve();
  let next: Promise<void> | undefined;
  const save = (): Promise<void> => {
    if (next) return next;
    const p = saving
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return input.persist(state);
      });
    next = p;
    saving = p;
    return p;
  };
  const record = (c: ResourceChange, d: DesiredResource, id: string): void => {
    const prev = getResource(state, c.resourceKind, c.renamedFrom ?? c.name);
    const entry: ManagedResource = {
      kind: c.resourceKind,
      name: c.name,
      id,
      origin: prev && prev.id === id ? prev.origin : c.adopt ? 'adopted' : 'created',
      specHash: d.specHash,
      secretFingerprints: { ...d.fingerprints },
      updatedAt: now().toISOString(),
    };
    if (d.kind === 'Integration') {
      entry.type = d.body.type;
      entry.autoBootstrap = d.body.autoBootstrap ?? false;
    }
    if (input.revision !== undefined) entry.revision = input.revision;
    if (c.renamedFrom) state = removeResource(state, c.resourceKind, c.renamedFrom);
    state = putResource(state, entry);
  };
  const forget = (c: ResourceChange): void => {
    state = removeResource(state, c.resourceKind, c.renamedFrom ?? c.name);
  };
  const finish = (o: ResourceOutcome): void => {
    outcomes.push(o);
    const log = logger.child({ resource: `${o.resourceKind}/${o.name}` });
    if (o.result === 'ok') log.info({ action: o.action, durationMs: o.durationMs, id: o.liveId }, 'applied');
    else log.warn({ action: o.action, result: o.result, error: o.error, validation: o.validation }, 'not applied');
    input.onOutcome?.(o, outcomes.length, total);
  };

  /** Run one resource's work, turning any error into a failed outcome. */
  const run = async (
    c: ResourceChange,
    work: () => Promise<string | undefined>,
    startedAt?: number,
  ): Promise<boolean> => {
    const base = { resourceKind: c.resourceKind, name: c.name, action: actionLabel(c) };
    if (input.signal?.aborted) {
      finish({ ...base, result: 'skipped', durationMs: 0, error: 'aborted before it started' });
      return false;
    }
    if (Date.now() >= ctx.poll.deadline) {
      finish({ ...base, result: 'skipped', durationMs: 0, error: 'the apply --timeout passed before it started' });
      return false;
    }
    if (c.blocked) {
      finish({ ...base, result: 'skipped', durationMs: 0, error: `blocked: ${c.blocked}` });
      return false;
    }
    const started = startedAt ?? Date.now();
    try {
      const liveId = await work();
      await save();
      const o: ResourceOutcome = { ...base, result: 'ok', durationMs: Date.now() - started };
      if (liveId !== undefined) o.liveId = liveId;
      finish(o);
      return true;
    } catch (err) {
      const o: ResourceOutcome = {
        ...base,
        result: 'failed',
        durationMs: Date.now() - started,
        error: err instanceof Error ? err.message : String(err),
      };
      if (err instanceof ApplyFailure && err.validation?.length) o.validation = err.validation;
      if (err instanceof ApplyFailure && err.liveId) o.liveId = err.liveId;
      try {
        await save(); // whatever was recorded before the failure (e.g. the id of a createError)
      } catch (saveErr) {
        o.error += `; state not saved: ${saveErr instanceof Error ? saveErr.message : String(saveErr)}`;
      }
      finish(o);
      return false;
    }
  };

  const queue = new PQueue({ concurrency: Math.max(1, input.concurrency ?? DEFAULT_CONCURRENCY) });
  const tasks: Array<Promise<unknown>> = [];
  const webhookCreates: Array<{ c: ResourceChange; d: DesiredWebhook; ready: Promise<boolean> }> = [];

  for (const c of changes) {
    const d = desired.get(`${c.resourceKind}/${c.name}`);
    if (c.resourceKind === 'Integration') {
      tasks.push(queue.add(() => run(c, () => applyIntegration(c, d as DesiredIntegration | undefined))));
    } else if (c.action === 'create') {
      webhookCreates.push({ c, d: d as DesiredWebhook, ready: Promise.resolve(true) });
    } else if (c.action === 'replace') {
      // the delete half runs now; the create half joins the batch below
      const ready = queue.add(async () => {
        if (input.signal?.aborted || c.blocked) return run(c, async () => undefined);
        try {
          await deleteWebhook(api, c.liveId!);
          forget(c);
          await save();
          return true;
        } catch (err) {
          return run(c, () => Promise.reject(err));
        }
      });
      webhookCreates.push({ c, d: d as DesiredWebhook, ready });
      tasks.push(ready);
    } else {
      tasks.push(queue.add(() => run(c, () => applyWebhookStateOrDelete(c, d as DesiredWebhook | undefined))));
    }
  }

  async function applyIntegration(c: ResourceChange, d: DesiredIntegration | undefined): Promise<string | undefined> {
    const need = (): DesiredIntegration => {
      if (!d) throw new Error(`no manifest for ${c.resourceKind}/${c.name}`);
      return d;
    };
    const payload = (): Record<string, unknown> | undefined => (c.deleteNeedsCredentials ? d?.deleteCredentials : undefined);
    switch (c.action) {
      case 'create':
        return createAndRecord(c, need());
      case 'update': {
        const r = await updateIntegration(ctx, c.liveId!, integrationBody(need()));
        record(c, need(), r.id);
        return r.id;
      }
      case 'replace':
        await deleteIntegration(ctx, c.liveId!, payload());
        forget(c);
        await save();
        return createAndRecord(c, need());
      case 'delete':
        if (!c.goneFromService) await deleteIntegration(ctx, c.liveId!, payload());
        forget(c);
        return undefined;
      default: // adopt, rename
        record(c, need(), c.liveId!);
        return c.liveId;
    }
  }

  async function createAndRecord(c: ResourceChange, d: DesiredIntegration): Promise<string> {
    const fresh = { ...c, adopt: false, renamedFrom: undefined };
    try {
      const r = await createIntegration(ctx, integrationBody(d));
      record(fresh, d, r.id);
      return r.id;
    } catch (err) {
      // it exists (e.g. createError): record it so the next plan fixes it with PUT, never a new POST
      if (err instanceof ApplyFailure && err.liveId) record(fresh, d, err.liveId);
      throw err;
    }
  }

  async function applyWebhookStateOrDelete(c: ResourceChange, d: DesiredWebhook | undefined): Promise<string | undefined> {
    if (c.action === 'delete') {
      if (!c.goneFromService) await deleteWebhook(api, c.liveId!);
      forget(c);
      return undefined;
    }
    if (!d) throw new Error(`no manifest for ${c.resourceKind}/${c.name}`);
    record(c, d, c.liveId!);
    return c.liveId;
  }

  // webhook creates: one batch POST once the replaced ones are deleted
  if (webhookCreates.length > 0) {
    tasks.push(
      (async () => {
        const ready = await Promise.all(webhookCreates.map((w) => w.ready));
        const go = webhookCreates.filter((_, i) => ready[i]);
        if (go.length === 0) return;
        if (input.signal?.aborted) {
          for (const w of go) await run(w.c, async () => undefined);
          return;
        }
        // one batch for all: it takes the next free slot (ahead of queued integrations, which can take long)
        let started = Date.now();
        const results = await queue.add(
          () => {
            started = Date.now();
            return createWebhooks(api, go.map((w) => webhookInput(w.d)));
          },
          { priority: 1 },
        );
        await Promise.all(
          go.map((w, i) => {
            const r = results[i]!;
            return run(
              w.c,
              async () => {
                if (!r.ok) throw new Error(r.error);
                record({ ...w.c, adopt: false, renamedFrom: undefined }, w.d, r.webhook.id);
                return r.webhook.id;
              },
              started,
            );
          }),
        );
      })(),
    );
  }

  await Promise.all(tasks);
  await queue.onIdle();
  await saving.catch(() => undefined);
  const ok = outcomes.length === total && outcomes.every((o) => o.result === 'ok');
  return { outcomes, state, ok };
}
