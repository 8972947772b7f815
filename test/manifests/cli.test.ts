/** `govops validate` and `govops schema` as a user runs them (the built CLI, a real process). */
import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import Ajv2020Module from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parseAllDocuments, parseDocument } from 'yaml';
import { runGovops } from '../helpers/cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixtures = fileURLToPath(new URL('../fixtures/manifests', import.meta.url));

describe('govops validate', () => {
  it('the examples are valid (exit 0), Kubernetes YAML under examples/ being ignored', async () => {
    const res = await runGovops(['validate', 'examples'], { cwd: root });
    expect(res.stdout).toBe('');
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(/0 errors, 0 warnings/);
    expect(readFileSync(`${root}/examples/.govopsignore`, 'utf8')).toMatch(/^kubernetes\/$/m);
  });

  it('the examples cover every kind and authentication variant, with secret references only', async () => {
    const res = await runGovops(['validate', 'examples', '--strict', '-o', 'json'], { cwd: root });
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual([]);
    const variants = new Set<string>();
    let webhooks = 0;
    for (const f of readdirSync(`${root}/examples`).filter((n) => n.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(`${root}/examples/${f}`, 'utf8'))) {
        const m = doc.toJS() as { kind: string; spec: { type?: string; config?: { authenticationType?: string } } };
        if (m.kind === 'Webhook') webhooks++;
        else variants.add(`${m.spec.type}${m.spec.config?.authenticationType ? `/${m.spec.config.authenticationType}` : ''}`);
      }
    }
    expect([...variants].sort()).toEqual(
      expect.arrayContaining([
        'cloud_warehouse/keyPair',
        'cloud_warehouse/oAuth',
        'cloud_warehouse/userPassword',
        'columnar_warehouse/accessKey',
        'columnar_warehouse/okta',
        'columnar_warehouse/userPassword',
        'dataset_warehouse',
        'distributed_sql',
        'lakehouse',
        'sql_analytics',
      ]),
    );
    expect([...variants].some((v) => v.startsWith('object_store'))).toBe(true);
    expect(webhooks).toBeGreaterThanOrEqual(2);
  });

  it('prints every problem as path:line:col: Kind/name: message and exits 1', async () => {
    const res = await runGovops(['validate', 'invalid'], { cwd: fixtures });
    expect(res.code).toBe(1);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toEqual([
      'invalid/integrations.yaml:8:3: Integration/warehouse: missing required field `host`',
      'invalid/integrations.yaml:9:5: warning: Integration/warehouse: unknown field `hots` (did you mean `host`?): not part of the cloud_warehouse config (interface 2.8); govops sends it but does not compare it',
      'invalid/integrations.yaml:14:11: Integration/warehouse: `spec.config.port` must be between 0 and 65535, not 70000',
      'invalid/webhooks.yml:14:9: Webhook/warehouse: duplicate name: Webhook/warehouse is also defined at invalid/webhooks.yml:1:1 (names are unique per kind)',
      'invalid/webhooks.yml:20:11: warning: Webhook/warehouse: `secret` is a plain literal: write it as { fromEnv: NAME } or { fromFile: PATH }',
    ]);
    expect(res.stdout).not.toContain('plain-text-secret');
    expect(res.stderr.trim().split('\n').pop()).toBe('2 files, 1 valid manifest: 3 errors, 2 warnings');
  });

  it('--output json prints the diagnostics list', async () => {
    const res = await runGovops(['validate', '--output', 'json', 'invalid/webhooks.yml'], { cwd: fixtures });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual([
      { file: 'invalid/webhooks.yml', line: 14, column: 9, kind: 'Webhook', name: 'warehouse', severity: 'error', message: expect.stringMatching(/^duplicate name: Webhook\/warehouse is also defined at invalid\/webhooks.yml:1:1/) },
      { file: 'invalid/webhooks.yml', line: 20, column: 11, kind: 'Webhook', name: 'warehouse', severity: 'warning', message: expect.stringMatching(/plain literal/) },
    ]);
  });

  it('warnings alone exit 0; --strict makes them errors', async () => {
    const warn = await runGovops(['validate'], { cwd: `${fixtures}/literal` });
    expect(warn.code).toBe(0);
    expect(warn.stdout).toContain('hook.yaml:10:11: warning: Webhook/literal-secret:');
    const strict = await runGovops(['validate', '--strict', '.'], { cwd: `${fixtures}/literal` });
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('hook.yaml:10:11: Webhook/literal-secret: `secret` is a plain literal');
  });

  it('--strict turns every warning into an error (a webhook url that is not a URL, a plain literal), as linters do', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'govops-strict-'));
    try {
      const hook = (name: string, url: string, extra = '') =>
        `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: ${url}\n  global: true\n  notificationType: [modelCreated]\n  actionType: triggered\n${extra}`;
      await writeFile(path.join(dir, 'a.yaml'), hook('not-a-url', 'hooks.example.com/x'));
      await writeFile(path.join(dir, 'b.yaml'), hook('literal', 'https://hooks.example.com/y', '  secret: plain-text\n'));
      await writeFile(path.join(dir, 'c.yaml'), hook('fine', 'https://hooks.example.com/z'));
      const warn = await runGovops(['validate', '.'], { cwd: dir });
      expect(warn.code, warn.stdout).toBe(0);
      expect(warn.stdout.match(/warning: /g)?.length).toBe(2);
      expect(warn.stderr.trim().split('\n').pop()).toBe('3 files, 3 valid manifests: 0 errors, 2 warnings');
      const strict = await runGovops(['validate', '--strict', '.'], { cwd: dir });
      expect(strict.code).toBe(1);
      expect(strict.stdout).not.toContain('warning: ');
      expect(strict.stdout).toMatch(/^a\.yaml:\d+:\d+: Webhook\/not-a-url: /m);
      expect(strict.stdout).toMatch(/^b\.yaml:\d+:\d+: Webhook\/literal: /m);
      expect(strict.stderr.trim().split('\n').pop()).toBe('3 files, 1 valid manifest: 2 errors, 0 warnings');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('counts as valid only the manifests without an error (a secret reference out of scope is one)', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'govops-count-'));
    try {
      const hook = (name: string, env: string) =>
        `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://hooks.example.com/${name}\n  global: true\n  notificationType: [modelCreated]\n  actionType: triggered\n  secret: { fromEnv: ${env} }\n`;
      await writeFile(path.join(dir, 'hooks.yaml'), [hook('in-scope', 'GOVOPS_SECRET_A'), hook('out-1', 'HOME'), hook('out-2', 'PATH')].join('---\n'));
      const res = await runGovops(['validate', '.'], { cwd: dir });
      expect(res.code).toBe(1);
      expect(res.stderr.trim().split('\n').pop()).toBe('1 file, 1 valid manifest: 2 errors, 0 warnings');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a missing path is an error', async () => {
    const res = await runGovops(['validate', 'nope'], { cwd: fixtures });
    expect(res.code).toBe(1);
    expect(res.stdout).toContain('nope:1:1: no such file or folder');
  });

  it('--output json: kind and name are null for a problem outside any manifest', async () => {
    const res = await runGovops(['validate', '-o', 'json', 'nope'], { cwd: fixtures });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout)).toEqual([
      { file: 'nope', line: 1, column: 1, kind: null, name: null, severity: 'error', message: expect.stringContaining('no such file or folder') },
    ]);
  });
});

describe('editor support', () => {
  it('the README shows the YAML language server line and govops schema; the examples carry a line that resolves', () => {
    const readme = readFileSync(`${root}/README.md`, 'utf8');
    expect(readme).toContain('# yaml-language-server: $schema=');
    expect(readme).toContain('npx govops schema');
    expect(readme).toMatch(/"yaml\.schemas": \{ "\.\/schemas\/govops\.schema\.json"/);
    const examples = readdirSync(`${root}/examples`).filter((n) => n.endsWith('.yaml'));
    expect(examples.length).toBeGreaterThanOrEqual(7);
    for (const f of examples) {
      // The language server reads the line per document: every document of a multi-document file starts with it.
      const documents = readFileSync(`${root}/examples/${f}`, 'utf8').split(/^---\n/m);
      for (const [i, doc] of documents.entries()) {
        const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(doc.split('\n')[0]!);
        expect(m, `${f}, document ${i + 1}`).not.toBeNull();
        expect(readFileSync(fileURLToPath(new URL(m![1]!, `file://${root}/examples/${f}`)), 'utf8')).toBe(readFileSync(`${root}/schemas/govops.schema.json`, 'utf8'));
      }
    }
    expect(readme).toMatch(/first line of each document/);
  });
});

describe('README: labels, annotations and deleting (issue #16 item 7)', () => {
  const readme = readFileSync(`${root}/README.md`, 'utf8');
  const format = readme.slice(readme.indexOf('## Manifest format'), readme.indexOf('## CLI reference'));

  it('documents labels and annotations and the govops/ annotations in the manifest format', () => {
    expect(format).toMatch(/`metadata\.labels` and `metadata\.annotations` are maps of strings/);
    for (const a of ['govops/delete', 'govops/manual-step', 'govops/suspend', 'govops/ignore-fields']) expect(format).toContain(`"${a}"`);
  });

  it('tells how to delete an autoBootstrap integration, and its snippet validates on a real example', async () => {
    const deleting = format.slice(format.indexOf('**Deleting.**'));
    expect(deleting).toMatch(/plans a \*\*blocked\*\* delete/);
    const snippet = /```yaml\n([\s\S]*?)```/.exec(deleting)![1]!.replace(/^ {2}/gm, '');
    const told = parseDocument(snippet).toJS() as { metadata: { name: string; annotations: Record<string, string> }; spec: { deleteCredentials: unknown } };
    expect(told.metadata.annotations).toEqual({ 'govops/delete': 'true' });
    // The example of that name, with the README's annotation and delete credentials, is a valid manifest.
    const example = parseAllDocuments(readFileSync(`${root}/examples/cloud-warehouse.yaml`, 'utf8')).map((d) => d.toJS() as { metadata: Record<string, unknown>; spec: Record<string, unknown> });
    const manifest = example.find((d) => d.metadata.name === told.metadata.name)!;
    expect(manifest.spec.autoBootstrap).toBe(true);
    manifest.metadata.annotations = told.metadata.annotations;
    manifest.spec.deleteCredentials = told.spec.deleteCredentials;
    const dir = await mkdtemp(path.join(tmpdir(), 'govops-readme-delete-'));
    try {
      await writeFile(path.join(dir, 'finance.yaml'), JSON.stringify(manifest));
      const res = await runGovops(['validate', dir], { cwd: root });
      expect(res.stderr).toMatch(/0 errors, 0 warnings/);
      expect(res.code).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('govops schema', () => {
  it('prints the combined schema, the same as schemas/govops.schema.json', async () => {
    const res = await runGovops(['schema'], { cwd: root });
    expect(res.code).toBe(0);
    const schema = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema).toEqual(JSON.parse(readFileSync(`${root}/schemas/govops.schema.json`, 'utf8')));
    expect(JSON.stringify(schema)).not.toMatch(/"\$ref":"(?!#)/); // self-contained
  });

  it('validates the examples (secret references included) and rejects unknown fields', () => {
    const Ajv = ((Ajv2020Module as unknown as { default?: unknown }).default ?? Ajv2020Module) as new (o: object) => {
      compile(s: object): ((v: unknown) => boolean) & { errors?: unknown };
    };
    const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(JSON.parse(readFileSync(`${root}/schemas/govops.schema.json`, 'utf8')));
    for (const f of readdirSync(`${root}/examples`).filter((n) => n.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(`${root}/examples/${f}`, 'utf8'))) {
        expect(validate(doc.toJS()), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
    const typo = { apiVersion: 'govops/v1', kind: 'Webhook', metadata: { name: 'a' }, spec: { url: 'https://a.example.com', global: false, notificationType: ['modelCreated'], actionType: 'triggered', secrett: 'x' } };
    expect(validate(typo)).toBe(false);
    const ref = { ...typo, spec: { ...typo.spec, secrett: undefined, secret: { fromEnv: 'X' } } };
    delete (ref.spec as Record<string, unknown>).secrett;
    expect(validate(ref)).toBe(true);
  });
});

describe('validate of a manifest whose name is as long as its file', () => {
  it('quotes it cut, with the count of what was left out, not in full in each diagnostic', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'govops-long-name-'));
    try {
      await writeFile(
        path.join(dir, 'long.yaml'),
        `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${'A'.repeat(200_000)}\nspec:\n  url: https://hooks.example.com/x\n  notificationType: [modelCreated]\n`,
      );
      const res = await runGovops(['validate', dir]);
      const out = res.stdout + res.stderr;
      expect(res.code).toBe(1);
      expect(out.length).toBeLessThan(10_000);
      expect(out).toMatch(/long\.yaml:4:9: Webhook\/A{200}… \(199800 more characters\): `metadata\.name` must be at most 63 characters/);
      // the value the message quotes too
      expect(out).toMatch(/`metadata\.name`: `A{200}… \(199800 more characters\)` is not valid/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
