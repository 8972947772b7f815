/**
 * Runs a composite GitHub Action's `run:` steps here, the way the runner does, so its shell glue is tested
 * for real: `${{ }}` expressions are evaluated (only plain references: inputs.*, github.*, steps.*.outputs.*),
 * each step runs as `bash --noprofile --norc -eo pipefail` with its `env:`, GITHUB_OUTPUT is read back into
 * `steps.<id>.outputs`, and a failing step stops the action. `uses:` steps and the steps named in `skip` are
 * not run (there is no network here: the Node set-up and `npm ci` are replaced by the built dist/).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

export interface ActionStep {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
  if?: string;
  'working-directory'?: string;
}

export interface ActionFile {
  name: string;
  description: string;
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
}

export async function readAction(file: string): Promise<ActionFile> {
  return parse(await readFile(file, 'utf8')) as ActionFile;
}

/** Every `${{ ... }}` expression in a text. */
export function expressions(text: string): string[] {
  return [...text.matchAll(/\$\{\{\s*(.*?)\s*\}\}/g)].map((m) => m[1]!);
}

/** A plain reference (`inputs.x`, `github.event.pull_request.number`, `steps.id.outputs.name`). */
export const PLAIN_REFERENCE = /^[a-z_]+(?:\.[A-Za-z0-9_-]+)+$/;

export interface RunContext {
  inputs: Record<string, string>;
  github: Record<string, unknown>;
  /** Variables every step gets (GITHUB_*, RUNNER_TEMP...). */
  env: Record<string, string | undefined>;
  cwd: string;
  skip?: string[];
}

export interface StepResult {
  id?: string;
  name?: string;
  code: number;
  stdout: string;
  stderr: string;
}

export interface ActionRun {
  ok: boolean;
  steps: StepResult[];
  outputs: Record<string, string>;
}

function lookup(root: unknown, parts: string[]): unknown {
  let cur = root;
  for (const p of parts) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function evaluate(text: string, scope: Record<string, unknown>): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_m, expr: string) => {
    if (!PLAIN_REFERENCE.test(expr)) throw new Error(`unsupported expression: ${expr}`);
    const v = lookup(scope, expr.split('.'));
    return v === undefined || v === null ? '' : String(v);
  });
}

function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const body: string[] = [];
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) body.push(lines[i]!);
      out[heredoc[1]!] = body.join('\n');
    } else if (line.includes('=')) {
      out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    }
  }
  return out;
}

/** Run a script as the runner does (`bash --noprofile --norc -eo pipefail`), asynchronously (stand-in servers may live in this process). */
export function runBash(script: string, env: Record<string, string | undefined>, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const clean: Record<string, string> = {};
    for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', script], { cwd, env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

export async function runAction(action: ActionFile, ctx: RunContext): Promise<ActionRun> {
  const inputs: Record<string, string> = {};
  const steps: Record<string, { outputs: Record<string, string> }> = {};
  const scope = { inputs, github: ctx.github, steps };
  for (const [name, def] of Object.entries(action.inputs)) inputs[name] = ctx.inputs[name] ?? evaluate(def.default ?? '', scope);
  const tmp = await mkdtemp(path.join(tmpdir(), 'govops-action-run-'));
  const results: StepResult[] = [];
  let ok = true;
  try {
    for (const [i, step] of action.runs.steps.entries()) {
      if (step.uses || step.run === undefined || (step.id && ctx.skip?.includes(step.id))) continue;
      if (step.if !== undefined) throw new Error(`step conditions are not supported here: ${step.if}`);
      const output = path.join(tmp, `output-${i}`);
      await writeFile(output, '');
      const stepEnv: Record<string, string> = {};
      for (const [k, v] of Object.entries(step.env ?? {})) stepEnv[k] = evaluate(String(v), scope);
      const r = await runBash(step.run, { ...ctx.env, ...stepEnv, GITHUB_OUTPUT: output }, ctx.cwd);
      results.push({ ...(step.id ? { id: step.id } : {}), ...(step.name ? { name: step.name } : {}), ...r });
      if (step.id) steps[step.id] = { outputs: parseOutputs(await readFile(output, 'utf8')) };
      if (r.code !== 0) {
        ok = false;
        break;
      }
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
  const outputs: Record<string, string> = {};
  for (const [name, def] of Object.entries(action.outputs)) outputs[name] = evaluate(def.value, scope);
  return { ok, steps: results, outputs };
}
