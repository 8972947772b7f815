/** Text tables of delivery records and retry results (`govops webhooks`). No I/O. */
import type { WebhookHistoryRecord } from '../api/types.js';
import { cutRedacted } from '../util/cut.js';
import { redactText } from '../util/redact.js';
import { printable } from '../util/terminal.js';
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

/** Printable ASCII alone: one terminal column per character (what string-width says of it too). */
const ASCII_ONLY = /^[\x20-\x7e]*$/;

/**
 * How many terminal columns a cell takes (string-width: a CJK character or an emoji takes 2, a combining mark none).
 * Names the service holds may be `日本語` or `🚀` (`webhooks list`); padding by UTF-16 length pushed the next columns
 * right. string-width is loaded only when some cell holds more than printable ASCII: it creates an Intl.Segmenter as
 * it loads, ~35 ms of ICU data for every `webhooks` and `state` table otherwise.
 */
async function columnWidth(cells: readonly string[]): Promise<(text: string) => number> {
  if (cells.every((c) => ASCII_ONLY.test(c))) return (text) => text.length;
  return (await import('string-width')).default;
}

export async function table(untrusted: string[][]): Promise<string> {
  if (untrusted.length === 0) return '';
  const rows = untrusted.map((r) => r.map(printable));
  const width = await columnWidth(rows.flat());
  const widths = rows[0]!.map((_, i) => rows.reduce((w, r) => Math.max(w, width(r[i] ?? '')), 0));
  const pad = (text: string, columns: number): string => text + ' '.repeat(Math.max(0, columns - width(text)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : pad(c, widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
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

export function recordTable(records: readonly WebhookHistoryRecord[]): Promise<string> {
  return table([RECORD_HEADER, ...records.map(recordCells)]);
}

export function retryTable(outcomes: readonly RetryOutcome[]): Promise<string> {
  const rows = [['RETRIED', 'RESULT', 'NEW ID', 'WEBHOOK', 'EVENT', 'STATUS', 'CODE']];
  for (const o of outcomes) {
    if (o.record) {
      const r = o.record;
      rows.push([cell(o.historyId, 20), isDelivered(r) ? 'delivered' : 'failed', ...recordCells(r).slice(1)]);
    } else rows.push([cell(o.historyId, 20), 'error', '-', '-', '-', '-', cell(o.error?.message, 200)]);
  }
  return table(rows);
}
