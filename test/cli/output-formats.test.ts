/**
 * `-o, --output` is global: a command refuses a format it does not print (a CI job parsing `healthcheck -o json`
 * got text), before it does anything; the formats it prints still work.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { OUTPUT_FORMATS, commandPath, formatsOf } from '../../src/cli/output-formats.js';
import { runGovops } from '../helpers/cli.js';

function paths(cmd: Command): string[] {
  return cmd.commands.flatMap((c) => [commandPath(c), ...paths(c)]);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'govops-output-formats-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('output formats by command', () => {
  it('names only commands of the tree; every command prints text', () => {
    const all = paths(buildProgram());
    expect(all).toContain('state list');
    for (const p of Object.keys(OUTPUT_FORMATS)) expect(all).toContain(p);
    for (const p of all) expect(formatsOf(p)).toContain('text');
    expect(formatsOf('healthcheck')).toEqual(['text']);
  });

  it.each([
    ['healthcheck', '-o', 'json'],
    ['acknowledge', '--phase', 'create', '-o', 'json', '.'],
    ['scripts', '--phase', 'create', '-o', 'json', '.'],
    ['-o', 'markdown', 'validate', '.'],
    ['state', 'list', '-o', 'markdown'],
  ])('govops %s ... refuses the format, exit 1, nothing done', async (...args) => {
    const res = await runGovops(args, { cwd: dir });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/does not print (json|markdown)/);
  });

  it('a format the command prints is taken: validate -o json, and -o text everywhere', async () => {
    const json = await runGovops(['validate', '-o', 'json', '.'], { cwd: dir });
    expect(json.stderr).not.toContain('does not print');
    expect(JSON.parse(json.stdout)).toEqual(expect.any(Array));
    const text = await runGovops(['healthcheck', '-o', 'text', '--listen', '127.0.0.1:1', '--timeout', '1s'], { cwd: dir });
    expect(text.stderr).not.toContain('does not print');
    expect(text.stdout).toContain('unhealthy');
  });
});
