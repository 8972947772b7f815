import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Folders whose test files share a worker's module cache (isolate: false): no test there changes process-wide
 * state another file could see (no process.env writes, no vi.mock/spyOn/fake timers, no child process of the
 * worker itself, no V8 flags). Starting a fresh worker and loading the sources again cost ~0.3 s of CPU per
 * file, more than most of these files' own tests. Every other folder keeps a fresh worker per file.
 */
/**
 * Node 20 reads the whole NODE_EXTRA_CA_CERTS bundle when any process starts, before any code runs: with the Debian
 * bundle that is ~120 ms of CPU per process, and the suite starts many (a worker per isolated test file, every
 * CLI, daemon and render process the tests run): 783 → 727 s for the whole suite in one quiet run each. The tests
 * never leave 127.0.0.1 and never use a public CA (docs/decisions.md "Test suite wall time"), so the workers, and
 * every process they start, go without it.
 * Deleted here, in the process that forks the workers, before any is forked.
 */
delete process.env.NODE_EXTRA_CA_CERTS;

const SHARED = ['plan', 'manifests', 'util', 'kinds', 'sandbox', 'api', 'preview', 'reconcile', 'state', 'sources', 'export'].map((d) => `test/${d}/**/*.test.ts`);

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
      { extends: true, test: { name: 'shared', include: SHARED, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED } },
    ],
  },
});
