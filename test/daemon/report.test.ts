/** The daemon's drift and rejection reports (src/daemon/report.ts): fields named, credentials masked, one line per problem. */
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { Writable } from 'node:stream';
import { DRIFT_VALUE_MAX_CHARS, driftLine, driftOf, logDrift, logRejected } from '../../src/daemon/report.js';
import { registerSecretsInForce } from '../../src/util/redact.js';
import type { PlanChange } from '../../src/plan/types.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { planOf as plan } from '../helpers/plans.js';

const change = (c: Partial<PlanChange> & Pick<PlanChange, 'name' | 'action'>): PlanChange =>
  ({ resourceKind: 'Integration', adopt: false, changes: [], reasons: [], ...c }) as PlanChange;

describe('drift report', () => {
  it('names the fields with the live and manifest values, and only the path of a credential', () => {
    const drifted = driftOf(plan([
      change({ name: 'sql', action: 'update', liveId: '1', changes: [
        { path: 'config.port', before: 1444, after: 1433, sensitive: false, forcesReplace: false },
        { path: 'config.password', sensitive: true, forcesReplace: false },
      ] }),
      change({ name: 'gone', action: 'create' }),
      change({ name: 'fine', action: 'noop', liveId: '2' }),
    ]));
    expect(drifted.map((d) => d.name)).toEqual(['sql', 'gone']);
    expect(drifted[0]!.fields).toEqual([{ path: 'config.port', live: 1444, desired: 1433 }, { path: 'config.password', sensitive: true }]);
    expect(JSON.stringify(drifted)).not.toMatch(/before|after/);
    expect(driftLine(drifted[0]!)).toBe('Integration/sql: config.port is 1444 in the service, 1433 in the manifest; config.password differs (sensitive)');
    expect(driftLine(drifted[1]!)).toBe('Integration/gone: missing from the service');
  });
});

describe('drift report of long values', () => {
  it('a long value is shown cut, with its length, in the fields and the log line; short ones whole', () => {
    const long = 'x'.repeat(1_000_000);
    const list = Array.from({ length: 5_000 }, (_, i) => `table_${i}`);
    const drifted = driftOf(plan([
      change({ name: 'lake', action: 'update', liveId: '1', changes: [
        { path: 'config.description', before: 'short', after: long, sensitive: false, forcesReplace: false },
        { path: 'config.tables', before: list, after: [], sensitive: false, forcesReplace: false },
      ] }),
    ]));
    const [description, tables] = drifted[0]!.fields;
    expect(description!.live).toBe('short');
    expect(description!.desired).toBe(`${'x'.repeat(DRIFT_VALUE_MAX_CHARS)}… (1000000 characters in all; govops plan shows the whole value)`);
    expect(tables!.live).toMatch(/^\["table_0","table_1",.*… \(\d+ characters in all; govops plan shows the whole value\)$/);
    expect(tables!.desired).toEqual([]);
    const lines: string[] = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, cb) => { lines.push(chunk.toString()); cb(); } }));
    logDrift(logger, { revision: 'r1', at: '2026-11-28T00:00:00.000Z', repaired: false, resources: drifted });
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(8 * DRIFT_VALUE_MAX_CHARS);
  });

  it('a secret across the cut is redacted before the cut: not even its beginning is shown', () => {
    const secret = 'S3cr3t-drift-cut-0123456789';
    registerSecretsInForce(secret); // process-wide: test/daemon files each run in a fresh worker
    {
      const value = `${'a'.repeat(DRIFT_VALUE_MAX_CHARS - 10)}${secret}${'b'.repeat(100)}`;
      const drifted = driftOf(plan([change({ name: 'lake', action: 'update', liveId: '1', changes: [{ path: 'config.description', before: 'x', after: value, sensitive: false, forcesReplace: false }] })]));
      const shown = String(drifted[0]!.fields[0]!.desired);
      expect(shown).not.toContain(secret.slice(0, 10));
      expect(shown.length).toBeLessThan(DRIFT_VALUE_MAX_CHARS + 100);
    }
  });
});

describe('rejected revision log', () => {
  it('a summary line, then one line per error and per warning, each its file:line:col', () => {
    const lines: Array<{ level: number; msg: string; file?: string }> = [];
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _e, cb) => { lines.push(JSON.parse(chunk.toString())); cb(); } }));
    const result = {
      diagnostics: [
        { file: 'm/a.yaml', line: 3, column: 5, severity: 'error', kind: 'Integration', name: 'a', message: 'missing required field `host`' },
        { file: 'm/b.yaml', line: 7, column: 1, severity: 'error', message: 'not YAML' },
        { file: 'm/a.yaml', line: 4, column: 5, severity: 'warning', kind: 'Integration', name: 'a', message: 'unknown field `hots`' },
      ],
    } as unknown as ReconcileResult;
    logRejected(logger, result, 'm/a.yaml:3:5: ... (and 1 more)');
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      [50, 'revision rejected (2 errors); the last good revision stays in force'],
      [50, 'm/a.yaml:3:5: Integration/a: missing required field `host`'],
      [50, 'm/b.yaml:7:1: not YAML'],
      [40, 'm/a.yaml:4:5: Integration/a: unknown field `hots`'],
    ]);
  });
});
