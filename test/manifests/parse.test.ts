/** YAML-level behaviour: documents, positions, secret references, plain literals, hostile input. */
import { describe, expect, it } from 'vitest';
import { at, errors, integration, parse } from './helpers.js';
import { MAX_FILE_BYTES } from '../../src/manifests/hostile.js';

const hook = (name: string, extra = '') =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://h.example.com/${name}\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n${extra}`;

describe('documents', () => {
  it('reads several documents per file and ignores empty ones', () => {
    const text = `---\n${hook('a')}---\n# only a comment\n---\n---\n${hook('b')}`;
    const res = parse(text);
    expect(res.diagnostics).toEqual([]);
    expect(res.manifests.map((m) => m.manifest.metadata.name)).toEqual(['a', 'b']);
    expect(res.manifests[1]!.source).toEqual({ file: 'm.yaml', ...at(text, 'apiVersion', 1) });
    expect(res.manifests[0]!.dir).toBe('/tmp');
  });

  it('locate() maps a path to the value, or to the nearest existing ancestor', () => {
    const text = hook('a');
    const m = parse(text).manifests[0]!;
    expect(m.locate(['spec', 'url'])).toEqual({ file: 'm.yaml', ...at(text, 'https://') });
    expect(m.locate(['spec', 'notificationType', 0])).toEqual({ file: 'm.yaml', ...at(text, 'modelCreated') });
    expect(m.locate(['spec', 'nothing'])).toEqual({ file: 'm.yaml', ...at(text, 'spec:') });
  });

  it('a problem reached through an alias is at the alias (where the value is used), not at its anchor', () => {
    // the anchored mapping is valid where it is written (impersonation), not where the alias uses it
    const text = integration(
      'sql_analytics',
      '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: d\n    schema: s\n    username: { fromEnv: U }\n    password: { fromEnv: P }\n    impersonation: &imp { enabled: true, role: R }\n    metadataDelimiters: *imp\n',
    );
    const res = parse(text);
    const alias = at(text, '*imp');
    expect(res.diagnostics.map((d) => `${d.line}:${d.column} ${d.message.split(' (')[0]}`)).toEqual([
      `${alias.line}:${alias.column} unknown field \`enabled\``,
      `${alias.line}:${alias.column} unknown field \`role\``,
    ]);
    const m = res.manifests[0]!;
    expect(m.locate(['spec', 'config', 'metadataDelimiters', 'role'])).toEqual({ file: 'm.yaml', ...alias });
    expect(m.locate(['spec', 'config', 'impersonation', 'role'])).toEqual({ file: 'm.yaml', ...at(text, 'R }') });
  });

  it('reports YAML syntax errors with their position, and keeps checking other documents', () => {
    const text = `${hook('a')}---\napiVersion: govops/v1\nkind: [Webhook\n---\n${hook('b', '  global: true\n')}`;
    const errs = errors(text);
    expect(errs.length).toBeGreaterThanOrEqual(2);
    expect(errs.some((e) => e.message.startsWith('YAML:') && e.line >= at(text, 'kind: [').line)).toBe(true);
    const dup = errs.find((e) => /duplicate|unique/i.test(e.message) && e.line === at(text, 'global: true').line);
    expect(dup, JSON.stringify(errs)).toBeDefined();
    expect(parse(text).manifests.map((m) => m.manifest.metadata.name)).toEqual(['a']);
  });
});

describe('YAML syntax errors point where the problem is', () => {
  it('an unclosed quoted string: at its opening quote, not at the end of the file', () => {
    const text = `${hook('a').replace('https://h.example.com/a', '"https://h.example.com/a')}---\n${hook('b')}`;
    expect(errors(text)).toEqual([
      expect.objectContaining({ ...at(text, '"https://'), message: 'YAML: the string quoted here is never closed (missing closing ")' }),
    ]);
    const single = "apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: 'it''s\n";
    expect(errors(single)).toEqual([expect.objectContaining({ ...at(single, "'it"), message: expect.stringContaining("missing closing ')") })]);
  });

  it('a key indented by mistake: at the key', () => {
    const text = 'apiVersion: govops/v1\n  kind: Webhook\nmetadata: { name: a }\n';
    const errs = errors(text);
    expect(errs.length).toBeGreaterThanOrEqual(1);
    expect(errs[0]).toMatchObject({ line: 1, column: 13, message: expect.stringMatching(/^YAML: /) });
  });
});

describe('secret references', () => {
  it('are accepted in place of any string in config but an identity field, in deleteCredentials, and a webhook secret', () => {
    const text = integration(
      'sql_analytics',
      '  autoBootstrap: true\n  config:\n    host: h.example.com\n    database: { fromFile: db.txt }\n    schema: s\n    username: { fromEnv: U }\n    password: { fromFile: /run/secrets/p }\n  deleteCredentials:\n    authenticationType: userPassword\n    username: { fromEnv: A }\n    password: { fromEnv: B }\n',
    );
    expect(parse(text).diagnostics).toEqual([]);
    expect(parse(hook('a', '  secret: { fromFile: hook.secret }\n')).diagnostics).toEqual([]);
  });

  it('keep their shape in the loaded manifest (resolved later by plan/apply)', () => {
    const m = parse(hook('a', '  secret: { fromEnv: GOVOPS_SECRET_HOOK_SECRET }\n')).manifests[0]!;
    expect(m.manifest.spec).toMatchObject({ secret: { fromEnv: 'GOVOPS_SECRET_HOOK_SECRET' } });
  });

  it('malformed references are errors at the reference', () => {
    const text = integration(
      'lakehouse',
      '  autoBootstrap: false\n  config:\n    workspaceUrl: https://w.example.com\n    httpPath: { fromEnv: A, fromFile: b }\n    token: { fromEnv: "bad name" }\n    catalog: { from_env: X }\n',
    );
    const errs = errors(text);
    const msg = (m: string) => errs.find((e) => e.message.includes(m));
    expect(msg('exactly one key')).toMatchObject(at(text, '{ fromEnv: A'));
    expect(msg('not a valid environment variable name')).toMatchObject(at(text, '"bad name"'));
    expect(msg('unknown secret reference `from_env` (did you mean `fromEnv`?)')).toMatchObject(at(text, 'from_env'));
  });

  it('are not allowed outside config / deleteCredentials / secret, nor where a non-string is expected', () => {
    const text = hook('a').replace('url: https://h.example.com/a', 'url: { fromEnv: URL }');
    expect(errors(text)[0]).toMatchObject({ ...at(text, '{ fromEnv: URL }'), message: "`spec.url` must be a string, not a secret reference (references are read only in spec.config, spec.deleteCredentials and a webhook's spec.secret: write the value itself here)" });
    const port = integration('sql_analytics', '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n    port: { fromEnv: PORT }\n');
    expect(errors(port)[0]).toMatchObject({ ...at(port, '{ fromEnv: PORT }'), message: '`spec.config.port` must be a number, not a secret reference (a secret reference stands for a string: write the value itself here)' });
  });
});

describe('plain-literal credentials', () => {
  const text = integration(
    'cloud_warehouse',
    '  autoBootstrap: true\n  config:\n    host: wh.example.com\n    warehouse: WH\n    database: DB\n    role: R\n    authenticationType: userPassword\n    username: u\n    password: hunter2\n  deleteCredentials:\n    authenticationType: userPassword\n    username: admin\n    password: s3cret\n    role: R\n',
  );
  it('are warnings (the manifest still loads), naming the field', () => {
    const res = parse(text);
    expect(res.diagnostics.map((d) => [d.severity, d.line, d.column])).toEqual([
      ['warning', at(text, 'hunter2').line, at(text, 'hunter2').column],
      ['warning', at(text, 's3cret').line, at(text, 's3cret').column],
    ]);
    expect(res.diagnostics[0]!.message).toContain('`password` is a plain literal');
    expect(res.diagnostics[0]!.message).not.toContain('hunter2');
    expect(res.manifests).toHaveLength(1);
  });
  it('are errors with strict', () => {
    const res = parse(text, true);
    expect(res.diagnostics.map((d) => d.severity)).toEqual(['error', 'error']);
    expect(res.manifests).toHaveLength(0);
  });
  it('covers the webhook secret', () => {
    const t = hook('a', '  secret: plain\n');
    expect(parse(t).diagnostics).toEqual([
      expect.objectContaining({ severity: 'warning', ...at(t, 'plain'), kind: 'Webhook', name: 'a' }),
    ]);
  });
});

describe('hostile input fails fast with a clear error', () => {
  const quick = (text: string) => {
    const t0 = Date.now();
    const res = parse(text);
    return { res, ms: Date.now() - t0 };
  };

  it('alias bombs', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
      'f: [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
    ].join('\n');
    const { res } = quick(bomb);
    expect(res.diagnostics).toHaveLength(1);
    expect(res.diagnostics[0]!.message).toMatch(/alias/i);
  });

  it('very deep flow nesting', () => {
    const { res } = quick(`a: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`);
    expect(res.diagnostics).toEqual([expect.objectContaining({ line: 1, message: expect.stringMatching(/nesting deeper than/) })]);
  });

  it('very deep block nesting', () => {
    let text = '';
    for (let i = 0; i < 1000; i++) text += `${' '.repeat(i)}k:\n`;
    const { res } = quick(text);
    expect(res.diagnostics[0]!.message).toMatch(/nesting too deep/);
  });

  it('moderately deep nesting that parses is still refused', () => {
    let text = '';
    for (let i = 0; i < 80; i++) text += `${' '.repeat(i * 2)}k:\n`;
    const { res } = quick(text);
    expect(res.diagnostics[0]!.message).toMatch(/nesting deeper than 64/);
  });

  it('oversized text', () => {
    const { res } = quick(`# ${'x'.repeat(MAX_FILE_BYTES)}\n`);
    expect(res.diagnostics[0]!.message).toMatch(/larger than 1048576 bytes/);
  });

  it('binary content', () => {
    const { res } = quick('apiVersion: govops/v1\nkind: \u0000\u0001\u0002');
    expect(res.diagnostics[0]).toMatchObject({ line: 2, column: 7, message: expect.stringMatching(/binary content/) });
  });

  it('code-executing and unknown tags', () => {
    for (const [text, tag] of [
      ['a: !!js/function "function(){ return 1 }"\n', 'js/function'],
      ['a: !custom value\n', '!custom'],
      ['a: !!binary aGVsbG8=\n', 'binary'],
      ['a: !!python/object:os.system ls\n', 'python'],
    ] as const) {
      const { res } = quick(text);
      expect(res.diagnostics, text).toHaveLength(1);
      expect(res.diagnostics[0]!.message).toContain(tag);
      expect(res.diagnostics[0]!.message).toMatch(/not allowed/);
      expect(res.diagnostics[0]).toMatchObject({ line: 1, column: 4 });
    }
  });
});
