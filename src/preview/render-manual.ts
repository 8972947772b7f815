/**
 * The manual-flow block of a resource in the comment (pure): each script the platform admin runs before
 * merging applies the change, collapsed, with its language hint and the command that fetches the real one.
 * One small function per step, and the acknowledgment (`govops/manual-step`) beside them.
 */
import { mdCode, mdFenced, mdHtml, mdText } from '../util/markdown.js';
import type { ManualAck, ManualStep } from './types.js';

/** A fence longer than any backtick run in the text, so the text can never close it. */
export function fenceFor(text: string): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  return '`'.repeat(longest + 1);
}

export function renderManualStep(name: string, step: ManualStep): string[] {
  const out = [`<details><summary>Manual step: <code>${mdHtml(step.phase)}</code> script for Integration/${mdHtml(name)}</summary>`, ''];
  if (step.script !== undefined) {
    const fence = fenceFor(step.script);
    out.push(`${fence}${step.language ?? ''}`, step.script.trimEnd(), fence, '');
    out.push(`Secret values are shown as placeholders. The real script: ${mdCode(step.command)}`, '');
  } else {
    out.push(`${step.note !== undefined ? mdText(step.note) : 'Not fetched.'} Fetch it with ${mdCode(step.command)}.`, '');
  }
  out.push('</details>');
  return out;
}

/** Whether merging applies the change: the acknowledgment it needs (or has), beside the scripts. */
export function renderManualAck(ack: ManualAck, file?: string): string[] {
  switch (ack.status) {
    case 'awaiting': {
      const out = [`⏸️ **Awaiting the manual step** (${ack.reason !== undefined ? mdText(ack.reason) : 'not acknowledged'}): merging applies nothing for this integration until the scripts ran in the platform and the manifest acknowledges them.`];
      if (ack.annotation) {
        out.push('', `Once they ran, add under \`metadata.annotations\`${file ? ` in ${mdCode(file)}` : ''}:`, '', '```yaml', mdFenced(ack.annotation), '```');
      }
      return [...out, ''];
    }
    case 'acknowledged':
      if (ack.fromPullRequest) {
        return [
          `✅ **Acknowledged by this pull request** (${mdCode(ack.annotation ?? '')}): it records that the scripts ran, it does not prove it ` +
            `(anyone who can edit the manifest can write the line). Check with whoever ran them in the platform before merging: merging applies the change.`,
          '',
        ];
      }
      return [`✅ **Acknowledged** in the manifest (${mdCode(ack.annotation ?? '')}): the scripts ran, merging applies the change.`, ''];
    case 'trusted':
      return ['Not checked (`--manual-steps trust`): the scripts are run out of band; merging applies the change at once.', ''];
  }
}

export function renderManualSteps(name: string, steps: readonly ManualStep[], ack?: ManualAck, file?: string): string[] {
  if (steps.length === 0 && !ack) return [];
  const out: string[] = [];
  if (steps.length > 0) {
    out.push(
      `**Manual flow** (autoBootstrap: false): run ${steps.length === 1 ? 'this script' : `these ${steps.length} scripts, in order,`} in the platform before the change is applied.`,
      '',
      ...steps.flatMap((s) => [...renderManualStep(name, s), '']),
    );
  }
  if (ack) out.push(...renderManualAck(ack, file));
  return out;
}
