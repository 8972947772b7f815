/**
 * docs/plan-json.md is the reference of `plan -o json`: the plan's fields, a ResourceChange's fields and the closed
 * lists of note codes. Held here to the types they describe (src/plan/types.ts, src/plan/notes.ts), read as text:
 * a field or code added to the code and not to the page (or the other way round) fails.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const read = (p: string): Promise<string> => readFile(new URL(`../../${p}`, import.meta.url), 'utf8');

/** The member names of `export interface NAME { ... }` (top level of its body). */
function interfaceKeys(src: string, name: string): string[] {
  const start = src.indexOf(`export interface ${name} {`);
  expect(start, name).toBeGreaterThanOrEqual(0);
  const body = src.slice(src.indexOf('{', start) + 1, src.indexOf('\n}', start));
  const keys: string[] = [];
  let depth = 0;
  for (const line of body.split('\n')) {
    const m = /^ {2}(\w+)\??:/.exec(line);
    if (depth === 0 && m) keys.push(m[1]!);
    depth += (line.match(/[{(]/g) ?? []).length - (line.match(/[})]/g) ?? []).length;
  }
  return keys.sort();
}

/** The string members of `export type NAME = | 'a' | 'b';`. */
function unionMembers(src: string, name: string): string[] {
  const start = src.indexOf(`export type ${name} =`);
  expect(start, name).toBeGreaterThanOrEqual(0);
  const rest = src.slice(start).replace(/\/\*\*[\s\S]*?\*\//g, '');
  const body = rest.slice(0, rest.indexOf(';'));
  return [...body.matchAll(/'([a-z-]+)'/g)].map((m) => m[1]!).sort();
}

/** The backticked codes of a table cell, leaving out what is said about them in parentheses. */
function codesOf(cell: string): string[] {
  let out = '';
  let depth = 0;
  for (const ch of cell) {
    if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0) out += ch;
  }
  return [...out.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!).sort();
}

describe('docs/plan-json.md', () => {
  it('the note tables list exactly the codes of src/plan/notes.ts', async () => {
    const [doc, notes] = await Promise.all([read('docs/plan-json.md'), read('src/plan/notes.ts')]);
    for (const [row, type] of [
      ['Blocked', 'BlockedCode'],
      ['Reason', 'ReasonCode'],
      ['Warning', 'WarningCode'],
    ] as const) {
      const line = new RegExp(`^\\| ${row} \\| (.*) \\|$`, 'm').exec(doc)?.[1];
      expect(line, row).toBeDefined();
      expect(codesOf(line!), row).toEqual(unionMembers(notes, type));
    }
  });

  it('the ResourceChange table lists exactly the fields of ResourceChange', async () => {
    const [doc, types] = await Promise.all([read('docs/plan-json.md'), read('src/plan/types.ts')]);
    const section = doc.slice(doc.indexOf('## ResourceChange'), doc.indexOf('## Notes'));
    const fields = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]!).sort();
    expect(fields).toEqual(interfaceKeys(types, 'ResourceChange'));
  });

  it('the Plan example holds every field of Plan', async () => {
    const [doc, types] = await Promise.all([read('docs/plan-json.md'), read('src/plan/types.ts')]);
    const section = doc.slice(doc.indexOf('## Plan'), doc.indexOf('## ResourceChange'));
    const block = /```jsonc\n([\s\S]*?)```/.exec(section)![1]!;
    const keys = [...block.matchAll(/^ {2}"(\w+)":/gm)].map((m) => m[1]!).sort();
    expect(keys).toEqual(interfaceKeys(types, 'Plan'));
  });
});
