/** Completing a PreviewResult (pure): warnings per touched resource, the summary, `changed` and the exit code. */
import type { PlanWarning } from '../plan/notes.js';
import type { DryRunResult, LiveAction, PreviewResult, PreviewWarning } from './types.js';

/** The plan's warnings about one of the `touched` resources (`Kind/name`): read from each warning's resource, not its text. */
export function warningsAbout(warnings: readonly PlanWarning[], touched: ReadonlySet<string>): PlanWarning[] {
  return warnings.filter((w) => w.resource !== undefined && touched.has(`${w.resource.kind}/${w.resource.name}`));
}

const LIVE_ACTIONS: readonly LiveAction[] = ['create', 'update', 'replace', 'delete', 'adopt', 'settle', 'noop', 'none'];
const DRY_STATUSES: ReadonlyArray<DryRunResult['status']> = ['passed', 'warning', 'failed', 'rejected', 'error', 'skipped'];

function resourceWarnings(r: PreviewResult, prune: boolean): PreviewWarning[] {
  const out: PreviewWarning[] = [];
  for (const x of r.resources) {
    const resource = `${x.resourceKind}/${x.name}`;
    const l = x.live;
    if (x.manualAck?.status === 'awaiting') {
      const run = (x.manualSteps ?? []).map((s) => `\`${s.command}\``).join(' then ');
      const add = x.manualAck.annotation ? `, then add \`${x.manualAck.annotation}\` to its metadata.annotations` : '';
      out.push({
        kind: 'manual-step',
        resource,
        message: `waits for its manual step (${x.manualAck.reason ?? 'not acknowledged'}): merging applies nothing for it until the platform script ran${run ? ` (${run})` : ''}${add}`,
      });
    }
    if (l?.blocked !== undefined && l.blockedCode === 'awaiting-manual-step') {
      // the wait for a manual step is its own warning (above)
    } else if (l?.blocked !== undefined) {
      // a refusal of the mass-deletion guard is one plan-level warning, not one per resource
      if (l.blockedCode !== 'deletion-guard') out.push({ kind: 'blocked', resource, message: `${l.action} blocked: ${l.blocked}` });
    } else if (l?.action === 'replace') {
      out.push({ kind: 'replace', resource, message: `will be replaced (deleted, then created)${l.forcesReplace.length ? `: ${l.forcesReplace.join(', ')} cannot be changed in place` : ''}` });
    } else if (l?.action === 'delete') out.push({ kind: 'delete', resource, message: 'will be deleted from the service' });
    // (only when the service has it: a removed resource it never had just goes)
    if (x.change === 'removed' && l?.action === 'none' && l.id !== undefined) {
      const message = prune
        ? 'removed from the manifests, but stays in the service: govops does not manage it (not in its state), so --prune leaves it'
        : 'removed from the manifests, but stays in the service: run with --prune to delete it';
      out.push({ kind: 'not-pruned', resource, message });
    }
    const d = x.dryRun;
    if (d && (d.status === 'failed' || d.status === 'rejected')) {
      const failing = d.tests.filter((t) => t.status === 'failed').map((t) => t.name);
      out.push({
        kind: 'dry-run-failed',
        resource,
        message: `the dry run ${d.status === 'failed' ? 'failed' : 'was rejected'}${failing.length ? `: ${failing.join(', ')}` : d.reason ? `: ${d.reason}` : ''}`,
      });
    } else if (d?.status === 'error') {
      out.push({ kind: 'dry-run-error', resource, message: `the dry run could not run: ${d.reason ?? 'unknown error'}` });
    }
  }
  return out;
}

const ORDER: Record<PreviewWarning['kind'], number> = {
  'plan-error': 0,
  'manual-step': 1,
  'dry-run-failed': 1,
  blocked: 2,
  replace: 3,
  delete: 4,
  'dry-run-error': 5,
  'not-pruned': 6,
  'plan-warning': 7,
  uncommitted: 8,
  'base-moved': 8,
  'base-invalid': 9,
};

/**
 * `prune`: offline, whether a removed resource is deleted by merging (the plan's --prune); without it merging
 * leaves it in the service, so it is no change there.
 */
export function finish(r: PreviewResult, opts: { prune?: boolean } = {}): PreviewResult {
  const warnings = [...r.warnings, ...resourceWarnings(r, opts.prune === true)];
  r.warnings = warnings.map((w, i) => ({ w, i })).sort((a, b) => ORDER[a.w.kind] - ORDER[b.w.kind] || a.i - b.i).map(({ w }) => w);
  const pr = { added: 0, changed: 0, renamed: 0, removed: 0 };
  for (const x of r.resources) if (x.change !== undefined) pr[x.change]++;
  r.summary = { pr, drift: r.drift.length, manualSteps: r.resources.reduce((n, x) => n + (x.manualSteps?.length ?? 0), 0) };
  if (r.mode === 'live') {
    const live = Object.fromEntries(LIVE_ACTIONS.map((a) => [a, 0])) as Record<LiveAction, number>;
    const dry = Object.fromEntries(DRY_STATUSES.map((s) => [s, 0])) as Record<DryRunResult['status'], number>;
    let blocked = 0;
    for (const x of r.resources) {
      if (x.live?.blocked !== undefined && x.live.blockedCode === 'awaiting-manual-step') {
        // counted below, with the offline ones
      } else if (x.live?.blocked !== undefined) blocked++;
      else if (x.live) live[x.live.action]++;
      if (x.dryRun) dry[x.dryRun.status]++;
    }
    r.summary.live = live;
    r.summary.blocked = blocked;
    r.summary.dryRuns = dry;
    r.changed = r.resources.some((x) => x.live !== undefined && x.live.blocked === undefined && ((x.live.action !== 'noop' && x.live.action !== 'none' && x.live.action !== 'settle') || x.live.adopt));
  } else {
    r.changed = r.valid && r.base !== undefined && r.resources.some((x) => x.change !== undefined && (x.change !== 'removed' || opts.prune === true));
  }
  // (one blocked for another reason too is counted blocked, above: apply skips it as blocked, the scripts would not help)
  const awaiting = r.resources.filter((x) => x.manualAck?.status === 'awaiting' && !(x.live?.blocked !== undefined && x.live.blockedCode !== 'awaiting-manual-step')).length;
  if (awaiting > 0) r.summary.awaitingManualStep = awaiting;
  const failed =
    !r.valid ||
    r.error !== undefined ||
    r.warnings.some((w) => w.kind === 'plan-error' || w.kind === 'dry-run-failed');
  r.exitCode = failed ? 1 : r.changed ? 2 : 0;
  return r;
}
