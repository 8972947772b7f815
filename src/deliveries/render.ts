/** Text tables of delivery records and retry results (`govops webhooks`). No I/O. */
import type { WebhookHistoryRecord } from '../api/types.js';
import { cutRedacted } from '../util/cut.js';
import { redactText } from '../util/redact.js';
import { printable } from '../util/terminal.js';
import stringWidth from 'string-width';

/**
 * `text` padded with spaces to `width` terminal columns (string-width: a CJK character or an emoji takes 2, a
 * combining mark none). Names the service holds may be `日本語` or `🚀` (`webhooks list`); padding by UTF-16 length
 * pushed the next columns right.
 */
const padColumns = (text: string, width: number): string => text + ' '.repeat(Math.max(0, width - stringWidth(text)));
import { isDelivered } from './records.js';
import type { RetryOutcome } from './retry.js';

/**
 * Text from the service shown on a terminal: control characters (escape sequences included) are escaped by the
 * one escaper (src/util/terminal.ts) and long values are cut, so a record cannot rewrite the operator's screen.
 * Redacted before either (src/util/cut.ts): a cut through a secret leaves a part the redactor cannot recognise.
 */
export function cell(text: string | undefined, max = 80): string {
  if (text === undefined || text === '') return '-';
  const clean = printable(redactText(text));
  return clean.length > max ? cutRedacted(clean, max - 1) : clean;
}

export function table(untrusted: string[][]): string {
  if (untrusted.length === 0) return '';
  const rows = untrusted.map((r) => r.map(printable));
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, stringWidth(r[i] ?? '')), 0));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : padColumns(c, widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

function recordCells(r: WebhookHistoryRecord): string[] {
  return [
    cell(r.createdAt, 32),
    cell(r.id, 20),
    cell(r.webhookName, 40),
    cell(r.notificationType, 48),
    r.statusCode ? String(r.statusCode) : '-',
    cell(r.responseCode, 32),
  ];
}

export const RECORD_HEADER = ['TIME', 'ID', 'WEBHOOK', 'EVENT', 'STATUS', 'CODE'];

export function recordTable(records: readonly WebhookHistoryRecord[]): string {
  return table([RECORD_HEADER, ...records.map(recordCells)]);
}

export function retryTable(outcomes: readonly RetryOutcome[]): string {
  const rows = [['RETRIED', 'RESULT', 'NEW ID', 'WEBHOOK', 'EVENT', 'STATUS', 'CODE']];
  for (const o of outcomes) {
    if (o.record) {
      const r = o.record;
      rows.push([cell(o.historyId, 20), isDelivered(r) ? 'delivered' : 'failed', ...recordCells(r).slice(1)]);
    } else rows.push([cell(o.historyId, 20), 'error', '-', '-', '-', '-', cell(o.error?.message, 200)]);
  }
  return table(rows);
}
