import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // vitest's default is one worker less than the cores: a single worker on a 2-core machine, where the
    // suite ran file after file with one core idle while a test waited on a child process or the sandbox.
    // Two at least (measured in docs/decisions.md, "Test suite wall time").
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
