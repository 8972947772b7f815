/**
 * The manual-flow block of a resource in the comment (pure): each script the platform admin runs before
 * merging applies the change, collapsed, with its language hint and the command that fetches the real one.
 * One small function per step so acknowledgement state can be added beside it.
 */
import type { ManualStep } from './types.js';

/** A fence longer than any backtick run in the text, so the text can never close it. */
export function fenceFor(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

export function renderManualStep(name: string, step: ManualStep): string[] {
  const out = [`<details><summary>Manual step: <code>${step.phase}</code> script for Integration/${name}</summary>`, ''];
  if (step.script !== undefined) {
    const fence = fenceFor(step.script);
    out.push(`${fence}${step.language ?? ''}`, step.script.replace(/\s+$/, ''), fence, '');
    out.push('Secret values are shown as placeholders. The real script: `' + step.command + '`', '');
  } else {
    out.push(`${step.note ?? 'Not fetched.'} Fetch it with \`${step.command}\`.`, '');
  }
  out.push('</details>');
  return out;
}

export function renderManualSteps(name: string, steps: readonly ManualStep[]): string[] {
  if (steps.length === 0) return [];
  return [
    `**Manual flow** (autoBootstrap: false): run ${steps.length === 1 ? 'this script' : `these ${steps.length} scripts, in order,`} in the platform before the change is applied.`,
    '',
    ...steps.flatMap((s) => [...renderManualStep(name, s), '']),
  ];
}
