/**
 * `govops export` round trips: the shipped examples (all seven kinds, webhooks, data sources) applied to a
 * sandbox under each server behaviour, exported into an empty folder, the printed variables set, and
 * `govops plan` on the export (no state) shows every resource as adopt and nothing else. Credentials never
 * reach the output (canary values).
 */
import { cp, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EXAMPLES, exampleEnv } from '../apply/harness.js';
import { rig, type Rig } from '../apply/inproc.js';
import { runGovops } from '../helpers/cli.js';
import { BEHAVIOUR_SETS, label } from '../behaviours/helpers.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** The variables `govops export` printed (`  NAME  (Kind/name path)`), each with a distinct value. */
function printedVariables(stdout: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of stdout.matchAll(/^ {2}([A-Z0-9_]+) {2}\(/gm)) env[m[1]!] = `set-${m[1]!.toLowerCase()}`;
  return env;
}

async function allText(folder: string): Promise<string> {
  const files = await readdir(folder);
  return (await Promise.all(files.map((f) => readFile(path.join(folder, f), 'utf8')))).join('\n');
}

/** The behaviour sets that matter for export: none, each reading of defaults, ids, extras, masking, and the two combinations. */
const SETS = BEHAVIOUR_SETS.filter((s) => s.length !== 1 || ['omit-defaults', 'echo-sent', 'null-unset', 'extra-fields', 'numeric-ids', 'string-ids', 'omit-masked', 'shuffle', 'data-source-metadata', 'no-data-sources'].includes(s[0]!));

describe.each(SETS.map((set) => ({ set, name: label(set) })))('govops export round trip under behaviour $name', ({ set }) => {
  it('export, set the printed variables, plan: every resource adopted, nothing else', async () => {
    // The examples are applied by the engine in-process (the setup; `govops apply` as a process has its
    // own tests, test/behaviours/cli.test.ts among them); export, validate and plan run as the CLI.
    r = await rig({ transitionMs: 10, behaviours: set });
    const { sandbox, dir } = r;
    await cp(EXAMPLES, path.join(dir, 'm'), { recursive: true, filter: (src) => !src.includes('kubernetes') && !src.includes('environments') });
    const secrets = exampleEnv('canary');
    Object.assign(r.env, secrets);
    const conn = { GOVOPS_URL: sandbox.url, GOVOPS_TOKEN: sandbox.adminToken };
    const apply = await r.run({ statePath: path.join(dir, 'applied', 'state.json') });
    if (!set.includes('no-data-sources')) expect(apply.ok, apply.error).toBe(true);

    // export with the example secrets still in the environment: none of them may appear anywhere
    const exp = await runGovops(['export', '--out', 'exported'], { cwd: dir, env: { ...secrets, ...conn } });
    expect(exp.code, exp.stderr).toBe(0);
    const text = await allText(path.join(dir, 'exported'));
    for (const value of Object.values(secrets)) {
      expect(text).not.toContain(value);
      expect(exp.stdout + exp.stderr).not.toContain(value);
    }
    expect(text).not.toContain('********');
    expect(text).toContain('kind: Integration');
    expect(text).toContain('kind: Webhook');
    if (!set.includes('no-data-sources')) expect(text).toContain('kind: DataSource');
    // defaults are left out: the examples spell out default ports and delimiters, the service fills in more
    expect(text).not.toMatch(/^ {4}port: /m);
    expect(text).not.toContain('hashDelimiter');
    expect(text).not.toContain('historicalIngestionMonths: 3');
    // the manual-flow integrations (lakehouse, the keyPair and oAuth cloud warehouses) carry their acknowledgment
    expect([...text.matchAll(/govops\/manual-step: create:[0-9a-f]{8}/g)].length).toBeGreaterThanOrEqual(3);
    const types = [...text.matchAll(/^ {2}type: (\w+)$/gm)].map((m) => m[1]);
    expect(new Set(types).size).toBe(7);

    const vars = printedVariables(exp.stdout);
    expect(Object.keys(vars).length).toBeGreaterThan(0);
    const template = await readFile(path.join(dir, 'exported', 'secrets.env.template'), 'utf8');
    for (const name of Object.keys(vars)) expect(template).toContain(`\n${name}=\n`);

    const validate = await runGovops(['validate', 'exported', '--strict'], { cwd: dir });
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).not.toContain('warning');

    const plan = await runGovops(['plan', 'exported', '--state', 'fresh/state.json', '-o', 'json'], { cwd: dir, env: { ...vars, ...conn } });
    expect(plan.code, plan.stderr + plan.stdout).toBe(0);
    const changes = (JSON.parse(plan.stdout) as { changes: Array<{ action: string; resourceKind: string; name: string; changes?: unknown[] }> }).changes;
    const exportedCount = [...text.matchAll(/^kind: /gm)].length;
    expect(changes).toHaveLength(exportedCount);
    for (const c of changes) expect({ name: `${c.resourceKind}/${c.name}`, action: c.action, changes: c.changes ?? [] }).toEqual({ name: `${c.resourceKind}/${c.name}`, action: 'adopt', changes: [] });
  });
});
