/** vitest globalSetup: compile src/ to dist/ once, so CLI tests run the real `govops` binary. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export default function setup(): void {
  const res = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], {
    encoding: 'utf8',
  });
  if (!existsSync('dist/cli/main.js')) {
    throw new Error(`build failed:\n${res.stdout}\n${res.stderr}`);
  }
}
