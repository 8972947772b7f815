/**
 * Issue 27 (security): what a manifest author may not write. Identity fields are never secret references
 * (their derived forms would be stored and printed), identity and destination fields are never ignored
 * (a plan saying "No changes" must not hide a redirected host), and JavaScript's object machinery
 * (`__proto__`, `constructor`, `prototype`) is no key anywhere. Each refusal is an error at file:line:col.
 */
import { describe, expect, it } from 'vitest';
import { at, errors, integration, parse } from './helpers.js';
import { ignoreFieldProblem } from '../../src/service/annotations.js';
import { ignoreFieldFacts } from '../../src/kinds/registry.js';

const sql = (config: string, annotations = '') =>
  integration('sql_analytics', `  autoBootstrap: true\n  config:\n    port: 5432\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n${config}`).replace(
    'metadata:\n  name: it\n',
    `metadata:\n  name: it\n${annotations}`,
  );

describe('identity fields are never secret references', () => {
  it.each([
    ['sql_analytics', 'host', '  autoBootstrap: true\n  config:\n    host: { fromEnv: H }\n    port: 1\n    database: d\n    schema: s\n    username: u\n    password: { fromEnv: P }\n'],
    ['lakehouse', 'workspaceUrl', '  autoBootstrap: false\n  config:\n    workspaceUrl: { fromFile: w.txt }\n    httpPath: /p\n    catalog: c\n    token: { fromEnv: T }\n'],
  ])('%s config.%s from a secret: an error at the reference', (type, field, body) => {
    const text = integration(type, body);
    const errs = errors(text).filter((e) => e.message.includes('cannot be a secret reference'));
    expect(errs).toEqual([expect.objectContaining({ file: 'm.yaml', ...at(text, '{ from', 0), message: expect.stringContaining(`\`config.${field}\` is the identity`) })]);
    expect(parse(text).manifests).toEqual([]);
  });

  it('another string from a secret (the database) is still accepted', () => {
    expect(errors(sql('    host: h.example.com\n').replace('database: d', 'database: { fromEnv: D }'))).toEqual([]);
  });
});

describe('govops/ignore-fields refuses identity and destination fields', () => {
  const ann = (v: string) => `  annotations:\n    govops/ignore-fields: "${v}"\n`;
  it.each(['config.host', 'config.okta.idpHost', 'config.port, config.host'])('integration: %s is an error at the annotation', (v) => {
    const text = sql('    host: h.example.com\n', ann(v));
    const errs = errors(text);
    expect(errs).toEqual([expect.objectContaining({ ...at(text, `"${v}"`), message: expect.stringMatching(/cannot be ignored/) })]);
  });

  it('the identity of each type, destinations by name, and a webhook url', () => {
    expect(ignoreFieldProblem('Integration', 'config.workspaceUrl', ignoreFieldFacts('lakehouse'))).toMatch(/identity|where the service connects/);
    expect(ignoreFieldProblem('Integration', 'config.name', ignoreFieldFacts('object_store'))).toMatch(/is the identity of an object_store integration/);
    expect(ignoreFieldProblem('Integration', 'config.dataset', ignoreFieldFacts('dataset_warehouse'))).toMatch(/is the identity/);
    expect(ignoreFieldProblem('Integration', 'config.host', ignoreFieldFacts('sql_analytics'))).toMatch(/is the identity/);
    expect(ignoreFieldProblem('Integration', 'config.oauth.authorityUrl', ignoreFieldFacts('cloud_warehouse'))).toMatch(/where the service connects/);
    expect(ignoreFieldProblem('Integration', 'config.name', ignoreFieldFacts('sql_analytics'))).toBeUndefined();
    expect(ignoreFieldProblem('Integration', 'config.port', ignoreFieldFacts('sql_analytics'))).toBeUndefined();
    expect(ignoreFieldProblem('Webhook', 'url', ignoreFieldFacts())).toMatch(/cannot be ignored on a webhook/);
    expect(ignoreFieldProblem('Webhook', 'global', ignoreFieldFacts())).toBeUndefined();
  });

  it('a field another team owns is still accepted', () => {
    expect(errors(sql('    host: h.example.com\n', ann('config.port')))).toEqual([]);
  });
});

describe('__proto__, constructor and prototype keys are refused anywhere', () => {
  it.each(['__proto__', 'constructor', 'prototype'])('config.%s: an error at the key, and no manifest', (key) => {
    const text = sql(`    host: h.example.com\n    ${key}: { polluted: true }\n`);
    const res = parse(text);
    expect(res.diagnostics.filter((d) => d.severity === 'error')).toEqual([
      expect.objectContaining({ file: 'm.yaml', ...at(text, `${key}:`), message: expect.stringContaining(`the key \`${key}\` is not allowed`) }),
    ]);
    expect(res.manifests).toEqual([]);
  });

  it('deeper, in metadata and in a webhook too', () => {
    const text = `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: a\n  labels:\n    "__proto__": x\nspec:\n  url: https://h.example.com/a\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n`;
    expect(errors(text)).toEqual([expect.objectContaining({ ...at(text, '"__proto__"'), message: expect.stringContaining('`__proto__` is not allowed') })]);
  });
});
