/** Reports of a revision name files as the user knows them: the display folder, also in a failed load's error. */
import { describe, expect, it } from 'vitest';
import { rewriteResultPaths } from '../../src/daemon/paths.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { ErrorCode } from '../../src/errors.js';

describe('rewriteResultPaths', () => {
  it('a failed load: the error names the file with the display folder, like its diagnostics', () => {
    const d = { file: 'm/broken.yaml', line: 3, column: 5, severity: 'error' as const, message: 'spec.type: must be one of …', kind: 'Integration', name: 'lake' };
    const result: ReconcileResult = {
      stage: 'load', ok: false, outcomes: [], changed: false, startedAt: '2026-11-26T00:00:00.000Z', finishedAt: '2026-11-26T00:00:01.000Z',
      diagnostics: [d, { ...d, file: 'm/other.yaml', line: 1 }],
      error: 'm/broken.yaml:3:5: Integration/lake: spec.type: must be one of … (and 1 more)',
      failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' },
    };
    const out = rewriteResultPaths(result, '/work/snapshots/abc', 'examples', '/work');
    expect(out.diagnostics.map((x) => x.file)).toEqual(['examples/m/broken.yaml', 'examples/m/other.yaml']);
    expect(out.error).toBe('examples/m/broken.yaml:3:5: Integration/lake: spec.type: must be one of … (and 1 more)');
  });

  it('an error that names the revision folder absolutely is mapped to the display folder', () => {
    const result: ReconcileResult = {
      stage: 'plan', ok: false, outcomes: [], changed: false, diagnostics: [], startedAt: '2026-11-26T00:00:00.000Z', finishedAt: '2026-11-26T00:00:01.000Z',
      error: 'cannot read /work/snapshots/abc/m/a.yaml',
      failure: { code: ErrorCode.sourceIo, failureClass: 'transient' },
    };
    expect(rewriteResultPaths(result, '/work/snapshots/abc', 'examples', '/elsewhere').error).toBe('cannot read examples/m/a.yaml');
  });
});
