import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Node 20 reads the whole NODE_EXTRA_CA_CERTS bundle when any process starts, before any code runs: with the Debian
 * bundle that is ~120 ms of CPU per process, and the suite starts many (a worker per isolated test file, every
 * CLI, daemon and render process the tests run): 783 → 727 s for the whole suite in one quiet run each. The tests
 * never leave 127.0.0.1 and never use a public CA (docs/decisions.md "Test suite wall time"), so the workers, and
 * every process they start, go without it.
 * Deleted here, in the process that forks the workers, before any is forked.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

/**
 * Test files share a worker's module cache (isolate: false), except those that change process-wide state another file
 * could see: starting a fresh worker and importing the sources again cost ~0.7 s of CPU per file, more than most
 * files' own tests (test/apply: 157 → 106 s of CPU, 89 → 64 s of wall time). A file listed here gets a worker of its
 * own; a new test file that writes process.env, mocks a module, spies on a global (vi.mock, vi.spyOn, fake timers) or
 * sets V8 flags goes here (docs/decisions.md "Test suite wall time"; test/docs/isolated-tests.test.ts checks it).
 */
export const ISOLATED = [
  // in-process daemons set V8 flags for their whole process (--expose-gc, the young generation's growth:
  // src/daemon/memory.ts); some tests spy on the clocks (Date.now, performance.now) or mock modules
  'test/daemon/**/*.test.ts',
  'test/behaviours/daemon.test.ts',
  'test/apply/data-sources.test.ts', // vi.spyOn(Ledger.prototype)
  'test/cli/boolean-env.test.ts', // deletes process.env variables
  'test/secrets/snapshot-swap.test.ts', // vi.mock('node:fs/promises')
  'test/export/staging.test.ts', // vi.mock('node:fs/promises')
  'test/sandbox/control.test.ts', // fake timers
  'test/state/store.test.ts', // vi.spyOn(Date, 'now')
  'test/util/redact-changes.test.ts', // vi.spyOn(LiteralMatcher.prototype)
  'test/util/literal-matcher-deep.test.ts', // vi.spyOn(String.prototype)
];

export default defineConfig({
  test: {
    globalSetup: ['test/helpers/build.ts'],
    // A bound for a test that hangs, not a speed check: the longest tests (a second PostgreSQL writer in
    // another process, the canary's dozen CLI runs) take ~10 s on a loaded machine and must still pass with
    // two CPU-bound processes beside the suite (issue 23), where they get a third of the CPU or less.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // vitest's default is one worker less than the cores: a single worker on a 2-core machine, where the
    // suite ran file after file with one core idle while a test waited on a child process or the sandbox.
    // Two at least (measured in docs/decisions.md, "Test suite wall time").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false, setupFiles: ['test/helpers/shared-worker-guard.ts'] },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
