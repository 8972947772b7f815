/** The js-yaml fast path must give what the `yaml` path gives, or route the text to `yaml`. */
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LineCounter, parseAllDocuments } from 'yaml';
import { fastParseDocuments } from '../../src/manifests/jsyaml.js';
import { MAX_ALIAS_COUNT } from '../../src/manifests/hostile.js';
import { parseManifestText } from '../../src/manifests/parse.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the `yaml` path of parse.ts reads (same options), or undefined when it reports any problem. */
function viaYaml(text: string) {
  const lc = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true, strict: true });
  if (docs.some((d) => d.errors.length || d.warnings.length)) return undefined;
  return docs
    .filter((d) => d.contents !== null)
    .map((d) => {
      const pos = lc.linePos((d.contents as { range: number[] }).range[0]!);
      return { value: d.toJS({ maxAliasCount: MAX_ALIAS_COUNT }) as unknown, line: pos.line, column: pos.col };
    })
    .filter((d) => d.value !== null); // comment-only / empty documents: ignored by both paths
}

/** 'fast' when js-yaml read it (then it must agree exactly with `yaml`), 'yaml' when routed. */
function agree(text: string): 'fast' | 'yaml' {
  const fast = fastParseDocuments(text);
  if (!fast) return 'yaml';
  const expected = viaYaml(text);
  expect(expected, `yaml reports a problem js-yaml accepted in ${JSON.stringify(text)}`).toBeDefined();
  expect(fast.filter((d) => d.value !== null)).toEqual(expected); // toEqual: -0 !== 0, NaN === NaN
  return 'fast';
}

const accepted = [
  'a: 1\nb: -2\nc: +3\nd: 0o17\ne: 0x1F\nf: 1.5\ng: .5\nh: 1e3\ni: -.inf\nj: .NaN\nk: ~\nl: null\nm: Null\nn:\no: true\np: FALSE\nq: yes\nr: 1_000\nt: 007\nu: on\nv: 2024-01-01\nw: 2024-01-01T10:00:00Z\nx: 12:30\ny: 1.5e-3\nz: 0.0\n',
  'a: "x \\" \\\\ \\n \\t \\u00e9 \\x41 \\/ \\U0001F600 \\N \\_ \\e"\nb: \'it\'\'s\'\nc: plain text with spaces   # comment\nd: a#b\ne: https://x.example.com:8080/p?q=1#frag\n',
  'list:\n- a\n- b\nnested:\n  - x: 1\n    y: [1, two, "three", {k: v}]\n  - - deep\n    - er\n  -\n    z: 1\n  - {}\n  - []\n',
  'flow: {a: 1, b: [x, y], "c": \'d\', e: {f: g}}\nempty: {}\nurls: [https://a.example.com, http://b]\ntrailing: [1, 2,]\njson: {"a":1}\n',
  '---\na: 1\n---\n# only comment\n---\n\n---\nb: 2\n--- # c\nc: 3\n...\n---\nd: 4\n',
  '# leading comment\n\nkey:   value  \n"quoted key": 1\n\'single\': 2\n-dash: 3\n1: numeric key\ntrue: bool key\n0x1F: hex key\n',
  'a:\n  b:\n    c:\n      d: [1, [2, [3]]]\n',
  'x: "not # a comment"\ny: \'a: b\'\nz: "tab\\tand"\nw: a:b\nv: don\'t\n',
  'a: |\n  block\n   more\nb: >-\n  folded\n\n  x\nc: |+\n  keep\n\nd: |2-\n   indented\n',
  'a: multi\n  line plain\nb: multi\n  - line\n',
  'a: b\r\nc:\r\n  - d\r\n',
  '---\n[a, b]\n---\n|\n  text\n',
  '__proto__: {a: 1}\nb: {__proto__: 1}\n',
  '<<: {a: 1}\n',
];

const routed = [
  'a: &anchor 1\nb: *anchor\n',
  'a: [*x]\n',
  'a: !!str 1\n',
  'a: !foo x\n',
  'a: !!js/function "function () {}"\n',
  '%YAML 1.1\n---\na: yes\n',
  '%TAG !e! tag:example.com,2000:\n---\na: 1\n',
  'a: 0b101\n',
  'a: -0b1\n',
  'a: +0x1F\n',
  'a: -0o17\n',
  'a: -.5\n',
  'a: [+.5e3]\n',
  'a: -0\n',
  'a: 1e400\n',
  `a: ${'9'.repeat(400)}\n`,
  `a: 0x${'F'.repeat(300)}\n`,
  'null: x\n',
  '~: x\n',
  'a: {b: c, : d}\n',
  '? [a, b]\n: x\n',
  '[a, b]: x\n',
  '{a: 1}: x\n',
  `${'k'.repeat(1100)}: v\n`,
  'a: "b"#c\n',
  'a: [b]#c\n',
  'a: {b: c}#x\n',
  'a: [\nb]\n',
  'a: [\n  1,\n  2\n]\n',
  'a: "x\ny"\n',
  "a: 'x\ny'\n",
  '--- a: 1\n',
  '--- - a\n',
  '... x\n',
  'a:\tb\n',
  'a: b\rc: d\n',
  '\ufeffa: 1\n',
  'a: 1\na: 2\n',
  'a: {b: 1, b: 2}\n',
  'a: b: c\n',
  '- a\nb: 1\n',
  'a: `x`\n',
  'a: "\\q"\n',
  // conservative: could be read fast, but the cheap check cannot tell
  'a: ! x\n',
  'a: "#fff"\n',
  'a: "multi\n  line"\n',
  '--- [a, b]\n',
  '--- |\n  text\n',
];

describe('fastParseDocuments (js-yaml)', () => {
  it.each(accepted.map((t, i) => [i, t] as const))('reads plain input #%i exactly as yaml does', (_i, text) => {
    expect(agree(text)).toBe('fast');
  });

  it.each(routed.map((t, i) => [i, t] as const))('routes input where the libraries or our policy differ #%i', (_i, text) => {
    expect(fastParseDocuments(text)).toBeUndefined();
  });

  it('agrees with yaml on every scalar form, as a value, in a flow and as a key', () => {
    const bodies = [
      '0', '00', '07', '08', '0b1', '0x1F', '0x1f', '0X1F', '0o17', '0o8', '0x', '0o', '.5', '1.', '1.5', '1e3', '1E3', '.5e3', '1e-400',
      '1e400', '1.5e308', '1e308', '.inf', '.Inf', '.INF', '.nan', '.NaN', 'inf', 'nan', 'Infinity', '1_000', '0b1_0', '7', '1.5e-3',
      '9'.repeat(400), 'yes', 'no', 'on', 'off', 'y', 'n', 'true', 'True', 'TRUE', 'tRue', 'false', 'null', 'Null', 'NULL', 'nUll', '~',
      '2024-01-01', '2024-01-01T00:00:00Z', '12:30:00', '1:30', '0.0', '00.5', '1.2.3', '0x1G', '+', '-', '.', '._5', '_1', '1_',
    ];
    let fast = 0;
    for (const sign of ['', '-', '+']) {
      for (const body of bodies) {
        const s = sign + body;
        for (const text of [`k: ${s}\n`, `- ${s}\n`, `k: [${s}, x]\n`, `k: {a: ${s}}\n`, `${s}: v\n`, `k: "${s}"\n`]) {
          if (agree(text) === 'fast') fast++;
        }
      }
    }
    expect(fast).toBeGreaterThan(700); // most forms stay on the fast path
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
    walk(`${root}/examples/kubernetes`);
    expect(files.length).toBeGreaterThan(8);
    for (const f of files) {
      const result = agree(readFileSync(f, 'utf8'));
      if (/\/examples\/[^/]+\.yaml$/.test(f)) expect(result, f).toBe('fast');
    }
  });

  it('scans long runs of hostile text in linear time (a quadratic scan would time out here)', () => {
    const n = 120 * 1000;
    for (const text of [`a: ${' '.repeat(n)}x\n`, `a: "${'\\"'.repeat(n / 2)}"\n`, `a: [${'1, '.repeat(n / 3)}]\n`, `a: ${':'.repeat(n)}\n`, `${' ]'.repeat(n / 2)}\n`]) {
      fastParseDocuments(text);
    }
  });

  it('gives each document the position of its root node', () => {
    const text = '# c\n---\n\n# c\na: 1\n--- # x\n   \n  b: 2\n---\n  - x\n';
    const docs = fastParseDocuments(text)!;
    expect(docs.map((d) => [d.line, d.column])).toEqual([[5, 1], [8, 3], [10, 3]]);
    expect(agree(text)).toBe('fast');
  });
});

describe('parseManifestText on the fast path', () => {
  it('loaded manifests still locate values (yaml parses the file on demand)', () => {
    const text = readFileSync(`${root}/examples/cloud-warehouse.yaml`, 'utf8');
    expect(fastParseDocuments(text)).toBeDefined();
    const res = parseManifestText(text, 'c.yaml', '/x');
    expect(res.diagnostics).toEqual([]);
    const second = res.manifests[1]!;
    const lines = text.split('\n');
    const hostLine = lines.findIndex((l) => l.includes('sales.warehouse.example.com')) + 1;
    expect(second.locate(['spec', 'config', 'host'])).toEqual({ file: 'c.yaml', line: hostLine, column: lines[hostLine - 1]!.indexOf('sales') + 1 });
    // The second document starts after its `---` and its editor modeline.
    expect(second.source).toEqual({ file: 'c.yaml', line: lines.indexOf('apiVersion: govops/v1', lines.indexOf('---')) + 1, column: 1 });
  });

  it('a routed file gets the same manifests and sources as the fast path', () => {
    const text = readFileSync(`${root}/examples/webhooks.yaml`, 'utf8');
    const fast = parseManifestText(text, 'w.yaml', '/x');
    const slow = parseManifestText(`${text}\n# \ttab sends this file to yaml\n`, 'w.yaml', '/x');
    expect(fastParseDocuments(`${text}\n# \t\n`)).toBeUndefined();
    expect(fast.diagnostics).toEqual([]);
    expect(slow.diagnostics).toEqual([]);
    expect(fast.manifests.map((m) => [m.manifest, m.source])).toEqual(slow.manifests.map((m) => [m.manifest, m.source]));
  });

  it('duplicate keys and aliases are still reported with positions by the yaml path', () => {
    const base = 'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: w\n  name: v\nspec: {}\n';
    const dup = parseManifestText(base, 'd.yaml', '/x');
    expect(dup.manifests).toEqual([]);
    expect(dup.diagnostics[0]).toMatchObject({ line: 5, severity: 'error' });
    expect(dup.diagnostics[0]!.message).toMatch(/unique|duplicate/i);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 8; i++) bomb.push(`${'abcdefgh'[i]}: &${'abcdefgh'[i]} [${Array(10).fill(`*${'abcdefgh'[i - 1]}`).join(', ')}]`);
    const res = parseManifestText(`${bomb.join('\n')}\n`, 'b.yaml', '/x');
    expect(res.manifests).toEqual([]);
    expect(res.diagnostics[0]!.message).toContain(`alias expansion limited to ${MAX_ALIAS_COUNT}`);
  });
});
