/** The fast subset reader must agree with `yaml` on everything it accepts, and give up on the rest. */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineCounter, parseAllDocuments } from 'yaml';
import { fastParseDocuments } from '../../src/manifests/fastyaml.js';
import { parseManifestText } from '../../src/manifests/parse.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function viaYaml(text: string) {
  const lc = new LineCounter();
  return parseAllDocuments(text, { lineCounter: lc })
    .filter((d) => d.contents !== null)
    .map((d) => ({ value: d.toJS() as unknown, line: lc.linePos((d.contents as { range: number[] }).range[0]!).line }))
    .filter((d) => d.value !== null); // comment-only documents: ignored by both paths
}

function agree(text: string): 'fast' | 'bail' {
  const fast = fastParseDocuments(text);
  if (!fast) return 'bail';
  expect(fast.map((d) => ({ value: d.value, line: d.line }))).toEqual(viaYaml(text));
  return 'fast';
}

const accepted = [
  'a: 1\nb: -2\nc: +3\nd: 0o17\ne: 0x1F\nf: 1.5\ng: .5\nh: 1e3\ni: -.inf\nj: .NaN\nk: ~\nl: null\nm: Null\nn:\no: true\np: FALSE\nq: yes\nr: 1_000\ns: 0b101\nt: 007\n',
  'a: "x \\" \\\\ \\n \\t \\u00e9 \\x41 \\/"\nb: \'it\'\'s\'\nc: plain text with spaces   # comment\nd: a#b\ne: https://x.example.com:8080/p?q=1#frag\n',
  'list:\n- a\n- b\nnested:\n  - x: 1\n    y: [1, two, "three", {k: v}]\n  - - deep\n    - er\n  -\n    z: 1\n  - {}\n  - []\n',
  'flow: {a: 1, b: [x, y], "c": \'d\', e: {f: g}}\nempty: {}\nurls: [https://a.example.com, http://b]\n',
  '---\na: 1\n---\n# only comment\n---\n\n---\nb: 2\n--- # c\nc: 3\n',
  '# leading comment\n\nkey:   value  \n"quoted key": 1\n\'single\': 2\n-dash: 3\n',
  'a:\n  b:\n    c:\n      d: [1, [2, [3]]]\n',
  'x: "#not a comment"\ny: \'a: b\'\nz: "tab\\tand"\n',
];

const bailed = [
  'a: &anchor 1\nb: *anchor\n',
  'a: !!str 1\n',
  'a: |\n  block\n',
  'a: >\n  folded\n',
  'a: multi\n  line plain\n',
  'a: "multi\n  line"\n',
  'a: [1,\n  2]\n',
  '? complex\n: key\n',
  '%YAML 1.2\n---\na: 1\n',
  'a: 1\na: 2\n',
  'a: b: c\n',
  'a: 1\r\nb: 2\r\n',
  'a:\n\tb: 1\n',
  '<<: {a: 1}\n',
  '1: numeric key\n',
  'true: bool key\n',
  '- a\nb: 1\n',
  'a: [1, 2,]\n',
  'a: {b}\n',
  '--- a: 1\n',
  'a: 1\n...\n',
  ' indented: root\n',
  'a: `x`\n',
  'a: @x\n',
];

describe('fastParseDocuments', () => {
  it.each(accepted.map((t, i) => [i, t] as const))('agrees with yaml on accepted input #%i', (_i, text) => {
    expect(agree(text)).toBe('fast');
  });
  it.each(bailed.map((t, i) => [i, t] as const))('gives up outside the subset #%i', (_i, text) => {
    expect(fastParseDocuments(text)).toBeUndefined();
  });
  it('agrees with yaml on every example and fixture, and reads the examples fast', () => {
    const files: string[] = [];
    for (const f of readdirSync(`${root}/examples`)) if (f.endsWith('.yaml')) files.push(`${root}/examples/${f}`);
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(`${d}/${e.name}`);
        else if (/\.ya?ml$/.test(e.name)) files.push(`${d}/${e.name}`);
      }
    };
    walk(`${root}/test/fixtures/manifests`);
    for (const f of files) {
      const result = agree(readFileSync(f, 'utf8'));
      if (f.includes('/examples/')) expect(result, f).toBe('fast');
    }
  });
  it('loaded manifests still locate values (yaml parses the file on demand)', () => {
    const text = readFileSync(`${root}/examples/cloud-warehouse.yaml`, 'utf8');
    const res = parseManifestText(text, 'c.yaml', '/x');
    expect(res.diagnostics).toEqual([]);
    const second = res.manifests[1]!;
    const lines = text.split('\n');
    const hostLine = lines.findIndex((l) => l.includes('sales.warehouse.example.com')) + 1;
    expect(second.locate(['spec', 'config', 'host'])).toEqual({ file: 'c.yaml', line: hostLine, column: lines[hostLine - 1]!.indexOf('sales') + 1 });
    expect(second.source).toEqual({ file: 'c.yaml', line: lines.indexOf('---', 0) + 2, column: 1 });
  });
});
