/** setAnnotation: several documents of one file edited at once, every other byte kept. */
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { setAnnotation } from '../../src/manifests/annotate.js';

const doc = (name: string, annotations = '') => `kind: Integration\nmetadata:\n  name: ${name} # keep\n${annotations}spec:\n  type: x\n`;

describe('setAnnotation', () => {
  it('replaces, adds to and creates annotations in many documents of one file, each in its place', () => {
    const docs = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? doc(`n${i}`) : i % 3 === 1 ? doc(`n${i}`, `  annotations:\n    govops.io/x: "old-${i}"\n`) : doc(`n${i}`, `  annotations:\n    other: "o"\n`),
    );
    const text = docs.join('---\n');
    const values = new Map(Array.from({ length: 300 }, (_, i) => [`n${i}`, `v-${i}`] as const).filter(([n]) => n !== 'n7'));
    const r = setAnnotation(text, 'Integration', 'govops.io/x', values);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const expected = docs
      .map((d, i) => {
        if (i === 7) return d;
        if (i % 3 === 0) return d.replace('  name: n' + i + ' # keep\n', `  name: n${i} # keep\n  annotations:\n    govops.io/x: "v-${i}"\n`);
        if (i % 3 === 1) return d.replace(`"old-${i}"`, `"v-${i}"`);
        return d.replace('    other: "o"\n', `    other: "o"\n    govops.io/x: "v-${i}"\n`);
      })
      .join('---\n');
    expect(r.text).toBe(expected);
    expect(r.edited).toHaveLength(299);
  });
});

describe('setAnnotation: the edit lands where the YAML says, whatever ends the previous entry', () => {
  const values = new Map([['a', 'create:12345678']]);
  const edit = (text: string): string => {
    const r = setAnnotation(text, 'Integration', 'govops/manual-step', values);
    expect(r.ok, r.ok ? '' : r.reason).toBe(true);
    return r.ok ? r.text : '';
  };

  it('metadata ending in a block mapping or list: annotations is added to metadata, not to the next key (spec)', () => {
    const labels = 'kind: Integration\nmetadata:\n  name: a\n  labels:\n    team: data # owner\nspec:\n  type: x\n';
    expect(edit(labels)).toBe(
      'kind: Integration\nmetadata:\n  name: a\n  labels:\n    team: data # owner\n  annotations:\n    govops/manual-step: "create:12345678"\nspec:\n  type: x\n',
    );
    const list = 'kind: Integration\nmetadata:\n  name: a\n  finalizers:\n  - x\nspec:\n  type: x\n';
    expect(edit(list)).toBe('kind: Integration\nmetadata:\n  name: a\n  finalizers:\n  - x\n  annotations:\n    govops/manual-step: "create:12345678"\nspec:\n  type: x\n');
  });

  it('annotations ending in a block scalar: the new entry follows it inside annotations', () => {
    const text = 'kind: Integration\nmetadata:\n  name: a\n  annotations:\n    note: |\n      two\n      lines\nspec:\n  type: x\n';
    expect(edit(text)).toBe(
      'kind: Integration\nmetadata:\n  name: a\n  annotations:\n    note: |\n      two\n      lines\n    govops/manual-step: "create:12345678"\nspec:\n  type: x\n',
    );
  });

  it('a value written as a block scalar is replaced, its line break kept', () => {
    const text = 'kind: Integration\nmetadata:\n  name: a\n  annotations:\n    govops/manual-step: |\n      delete:00000000\n      edit:11111111\nspec:\n  type: x\n';
    expect(edit(text)).toBe('kind: Integration\nmetadata:\n  name: a\n  annotations:\n    govops/manual-step: "create:12345678"\nspec:\n  type: x\n');
  });

  it('a CRLF file gets CRLF lines', () => {
    const text = 'kind: Integration\r\nmetadata:\r\n  name: a\r\nspec:\r\n  type: x\r\n';
    expect(edit(text)).toBe('kind: Integration\r\nmetadata:\r\n  name: a\r\n  annotations:\r\n    govops/manual-step: "create:12345678"\r\nspec:\r\n  type: x\r\n');
    const withAnnotations = 'kind: Integration\r\nmetadata:\r\n  name: a\r\n  annotations:\r\n    o: "1"\r\nspec:\r\n  type: x\r\n';
    expect(edit(withAnnotations)).toBe('kind: Integration\r\nmetadata:\r\n  name: a\r\n  annotations:\r\n    o: "1"\r\n    govops/manual-step: "create:12345678"\r\nspec:\r\n  type: x\r\n');
  });

  it('a layout it cannot edit safely (an explicit ? key) is refused, not written wrong', () => {
    const text = 'kind: Integration\nmetadata:\n  ? name\n  : a\nspec:\n  type: x\n';
    const r = setAnnotation(text, 'Integration', 'govops/manual-step', values);
    if (r.ok) expect(YAML.parse(r.text)).toEqual({ ...YAML.parse(text), metadata: { name: 'a', annotations: { 'govops/manual-step': 'create:12345678' } } });
  });
});
