/**
 * One module per integration kind (issue 23): the registry derives every table from the kind modules, a
 * throw-away kind added through the registry alone appears in all of them, and no source file outside
 * src/kinds/ (and the sandbox, which keeps its own reading of the interface on purpose) names a type string.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { defineKind } from '../../src/kinds/kind.js';
import { BUILTIN_KINDS, INTEGRATION_TYPES, KINDS, createRegistry } from '../../src/kinds/registry.js';
import { SCHEMA_FILES } from '../../src/manifests/schema-files.js';

const SRC = new URL('../../src/', import.meta.url).pathname;

/** Code (not comments) that names a type string: identifiers equal to one, strings and template parts holding one as a word. */
function namings(file: string, types: readonly string[]): string[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const words = new RegExp(`(?<![\\w./-])(${types.join('|')})(?![\\w./-])`);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    const k = node.kind;
    const literal = ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || k === ts.SyntaxKind.TemplateHead || k === ts.SyntaxKind.TemplateMiddle || k === ts.SyntaxKind.TemplateTail;
    const t = (node as ts.LiteralLikeNode).text;
    if ((literal && words.test(t)) || (ts.isIdentifier(node) && types.includes(node.text))) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${file.slice(SRC.length)}:${line + 1}: ${node.getText()}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('kinds', () => {
  it('no source file outside src/kinds/ and src/sandbox/ names a kind type string', () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.ts') && !f.startsWith('kinds/') && !f.startsWith('sandbox/'))
      .map((f) => join(SRC, f));
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((f) => namings(f, INTEGRATION_TYPES))).toEqual([]);
    // the scan does find a naming where there is one
    expect(namings(join(SRC, 'kinds/object_store/index.ts'), INTEGRATION_TYPES)).not.toEqual([]);
  });

  it('the schemas know the same kinds as the registry', () => {
    const body = JSON.parse(readFileSync(new URL('../../schemas/integration-body.json', import.meta.url), 'utf8')) as { $defs: { type: { enum: string[] } } };
    expect([...body.$defs.type.enum].sort()).toEqual([...INTEGRATION_TYPES].sort());
  });

  it('the schema files of every kind are loaded from the kind modules', () => {
    for (const k of BUILTIN_KINDS) {
      if ('configSchema' in k && k.configSchema) expect(SCHEMA_FILES).toContain(k.configSchema);
      if ('deleteSchema' in k && k.deleteSchema) expect(SCHEMA_FILES).toContain(k.deleteSchema);
    }
  });

  it('a throw-away kind added through the registry alone is in every table', () => {
    const vector = defineKind({
      type: 'vector_store',
      configSchema: 'config/vector_store.json',
      identity: (c) => `index=${String(c.index ?? '')}:region=${String(c.region ?? '')}`,
      naturalKeyFields: ['index', 'region'],
      lastingIdentity: (c) => `index=${String(c.index ?? '')}`,
      identityField: ['spec', 'config', 'index'],
      displayName: (c) => (typeof c.index === 'string' ? c.index : undefined),
      masked: ['apiKey'],
      nonEditable: ['type', 'autoBootstrap', 'config.index'],
      manualOnly: true,
      deleteSchema: 'delete/vector_store.json',
      scripts: ['create', 'delete'],
    });
    const r = createRegistry([...BUILTIN_KINDS, vector]);
    expect(r.types).toEqual([...INTEGRATION_TYPES, 'vector_store']);
    expect(r.isType('vector_store')).toBe(true);
    expect(KINDS.isType('vector_store')).toBe(false); // the registry govops runs with is untouched
    expect(r.kindOf('vector_store')).toBe(vector);
    expect(r.naturalKey('vector_store', { index: 'docs', region: 'eu' })).toBe('vector_store:index=docs:region=eu');
    // identity: the natural key without its editable part (a changed region is drift, not another integration)
    expect(r.integrationIdentity('vector_store', { index: 'docs', region: 'eu' })).toBe('vector_store:index=docs');
    expect(r.naturalKeyFields.vector_store).toEqual(['index', 'region']);
    expect(r.displayHost('vector_store', { index: 'docs' })).toBe('docs');
    expect(r.displayHost('vector_store', {})).toBe('vector_store');
    expect(r.nonEditable.vector_store).toEqual(['type', 'autoBootstrap', 'config.index']);
    expect(r.manualOnly.has('vector_store')).toBe(true);
    expect(r.deletePayloadKinds.has('vector_store')).toBe(true);
    expect(r.scriptKinds.create.has('vector_store')).toBe(true);
    expect(r.scriptKinds.edit.has('vector_store')).toBe(false);
    expect(r.maskedKeys.has('apiKey')).toBe(true);
    expect(KINDS.maskedKeys.has('apiKey')).toBe(false);
    expect(r.schemaFiles).toEqual(expect.arrayContaining(['config/vector_store.json', 'delete/vector_store.json']));
    expect(r.dataSourceHost).toBe(KINDS.dataSourceHost);
    expect(() => createRegistry([...BUILTIN_KINDS, vector, vector])).toThrow(/twice/);
  });
});
