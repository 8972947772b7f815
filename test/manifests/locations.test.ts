/** Where and what `validate` tells a manifest author (audit-locations): each diagnostic at the offending text. */
import { describe, expect, it } from 'vitest';
import { at, integration, parse } from './helpers.js';

const hook = (name: string, spec = '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n') =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n${spec}`;

const shown = (text: string) => parse(text).diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`);

describe('diagnostic locations and messages', () => {
  it('an alias with no anchor is reported at the alias, naming it, not at the document start', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: *nothere\n  notificationType: [modelCreated]\n  actionType: triggered\n');
    const res = parse(text);
    expect(res.diagnostics).toHaveLength(1);
    const d = res.diagnostics[0]!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, '*nothere'));
    expect(d.message).toContain('*nothere');
    expect(d.message).not.toContain('alias expansion limited');
  });

  it('an anchor of an earlier document is not one of this document: the alias says so, at the alias', () => {
    const text = `${hook('a', '  url: &u https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n')}---\n${hook('b', '  url: *u\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n')}`;
    const res = parse(text);
    expect(res.manifests.map((m) => m.manifest.metadata.name)).toEqual(['a']);
    const d = res.diagnostics[0]!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, '*u'));
    expect(d.message).toMatch(/anchors do not carry across documents/);
  });

  it('a YAML merge key (`<<: *base`) is named as such, with how to write it instead', () => {
    const text = hook('a', '  <<: { url: https://h.example.com/x }\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n');
    const d = parse(text).diagnostics.find((x) => x.message.includes('<<'))!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, '<<'));
    expect(d.message).toMatch(/merge key/);
    expect(d.message).toMatch(/write the fields out/);
  });

  it('a merge key inside config is an error too (it would be sent to the service as a field `<<`)', () => {
    const text = integration(
      'sql_analytics',
      '  autoBootstrap: false\n  config:\n    host: h.example.com\n    <<: &db { database: d, schema: s }\n    username: { fromEnv: U }\n    password: { fromEnv: P }\n',
    );
    const res = parse(text);
    const d = res.diagnostics.find((x) => x.message.includes('merge key'))!;
    expect(d.severity).toBe('error');
    expect({ line: d.line, column: d.column }).toEqual(at(text, '<<'));
    expect(res.manifests).toEqual([]);
  });

  it('an unknown govops annotation is at its key (the typo), not at its value', () => {
    const text = hook('a').replace('  name: a\n', '  name: a\n  annotations:\n    govops/supend: "true"\n');
    const d = parse(text).diagnostics[0]!;
    expect(d.message).toMatch(/unknown govops annotation `govops\/supend`/);
    expect({ line: d.line, column: d.column }).toEqual(at(text, 'govops/supend'));
  });

  it('a key written twice names the key and where it was first written', () => {
    const text = hook('a').replace('  global: false\n', '  global: false\n  global: true\n');
    const res = shown(text);
    expect(res).toHaveLength(1);
    const second = at(text, 'global', 1);
    const first = at(text, 'global');
    expect(res[0]).toBe(`${second.line}:${second.column} YAML: duplicate key \`global\`: it is written twice in this mapping (first at line ${first.line}, column ${first.column}): keep one`);
  });

  it('a plain value holding `: ` says to quote it, at the value, without repeating it', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n  secret: pa: ss\n');
    const res = parse(text);
    expect(res.diagnostics).toHaveLength(1);
    const d = res.diagnostics[0]!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, 'pa: ss'));
    expect(d.message).toMatch(/put the value in quotes/);
    expect(d.message).not.toContain('pa: ss');
  });

  it('a flow collection never closed is reported where it opens, not at the next key', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated, modelDeleted\n  actionType: triggered\n');
    const res = shown(text);
    const open = at(text, '[modelCreated');
    expect(res).toEqual([`${open.line}:${open.column} YAML: the flow sequence opened here with \`[\` is never closed: end it with \`]\``]);
    const map = hook('b').replace('metadata:\n  name: b\n', 'metadata: { name: b\n');
    const brace = at(map, '{ name');
    expect(shown(map)).toEqual([`${brace.line}:${brace.column} YAML: the flow mapping opened here with \`{\` is never closed: end it with \`}\``]);
  });

  it('a flow collection closed later but with a line indented too little keeps the position of that line', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated,\n  modelDeleted]\n  actionType: triggered\n');
    const res = parse(text).diagnostics;
    expect(res.length).toBeGreaterThan(0);
    expect(res.every((d) => !d.message.includes('never closed'))).toBe(true);
  });

  it('an unknown field whose value is a secret reference is only an unknown field (not "write the value itself")', () => {
    const text = integration(
      'sql_analytics',
      '  autoBootstrap: false\n  config:\n    host: h.example.com\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n    tokn: { fromEnv: T }\n',
    );
    const res = parse(text).diagnostics;
    expect(res).toHaveLength(1);
    expect({ line: res[0]!.line, column: res[0]!.column }).toEqual(at(text, 'tokn'));
    expect(res[0]!.message).toMatch(/^unknown field `tokn`/);
    expect(res[0]!.message).not.toMatch(/write the value itself/);
  });

  it('an empty required field is not told to be left out (that is the next error)', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: false\n  notificationType:\n  actionType: triggered\n');
    const d = parse(text).diagnostics;
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toBe('`spec.notificationType` must be a list, not an empty value (nothing is written after `notificationType:`: write the value, the field is required)');
    expect(d[0]!.line).toBe(at(text, 'notificationType:').line);
  });
});
