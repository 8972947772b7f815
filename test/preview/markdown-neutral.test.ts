/**
 * Issue 27: untrusted text in Markdown is neutralised everywhere (src/util/markdown.ts). A pull request adding
 * `x@octo-org.yaml` must not mention @octo-org in the preview's changed-files table; names, service messages and
 * file names make no mention, reference, HTML, link or autolink, and cannot break a table, in the preview, in
 * `plan -o markdown` and in the apply summary.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/plan/render-markdown.js';
import type { Plan } from '../../src/plan/types.js';
import { outcomeMarkdown } from '../../src/reconcile/report.js';
import { mdCode, mdFenced, mdHtml, mdText } from '../../src/util/markdown.js';
import { registerSecrets } from '../../src/util/redact.js';
import { printable } from '../../src/util/terminal.js';
import { runGovops } from '../helpers/cli.js';
import { git, initRepo } from '../helpers/git.js';

const HOSTILE = '@octo-org/team <img src=x onerror=alert(1)> [click](https://evil.example) https://evil.example www.evil.example #12 a|b';

/** What GitHub renders as Markdown (and so may link): the text outside code blocks and code spans. */
function liveText(md: string): string {
  return md.replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** No live mention, reference, HTML tag, link or autolink. */
function neutral(md: string): void {
  const text = liveText(md);
  expect(text).not.toMatch(/@(?!&#8203;)[A-Za-z0-9]/);
  expect(text).not.toMatch(/(?<!&)#\d/);
  expect(text).not.toMatch(/<(img|a)\b/i); // (`<b>` is the renderer's own, in <summary>)
  expect(text).not.toMatch(/(?<!\\)\]\(/);
  expect(text).not.toMatch(/https?:\/\//);
  expect(text).not.toMatch(/www\./i);
}

const hook = (name: string, url: string) =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: ${url}\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n`;

describe('the preview comment of a pull request adding x@octo-org.yaml', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await mkdtemp(path.join(tmpdir(), 'govops-preview-md-'));
    initRepo(repo);
    await mkdir(path.join(repo, 'm'));
    await writeFile(path.join(repo, 'm', 'base.yaml'), hook('base', 'https://hooks.example.com/base'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    git(repo, 'checkout', '-q', '-b', 'pr');
    await writeFile(path.join(repo, 'm', 'x@octo-org.yaml'), hook('mention', 'https://hooks.example.com/@octo-org'));
    await writeFile(path.join(repo, 'm', '[click](https:evil.example)<b>#12|.yaml'), hook('link', 'https://www.evil.example/x'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'pr');
  });
  afterAll(() => rm(repo, { recursive: true, force: true }));

  it('renders the file names as text: no mention, link, HTML or broken table', async () => {
    const r = await runGovops(['preview', 'm', '--base', 'main'], { cwd: repo, env: { GOVOPS_URL: undefined } });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toContain('| added | m/x@&#8203;octo-org.yaml |');
    expect(r.stdout).toContain('| added | m/\\[click\\](https:evil.example)&lt;b&gt;#&#8203;12\\|.yaml |');
    neutral(r.stdout);
  });
});

describe('every Markdown renderer neutralises untrusted text', () => {
  it('the three contexts', () => {
    neutral(mdText(HOSTILE));
    expect(mdText(HOSTILE)).toBe(
      '@&#8203;octo-org/team &lt;img src=x onerror=alert(1)&gt; \\[click\\](https:&#8203;//evil.example) https:&#8203;//evil.example www&#8203;.evil.example #&#8203;12 a\\|b',
    );
    // inside raw HTML Markdown makes no link: only entities, mentions and autolinks matter
    expect(mdHtml(HOSTILE)).toBe(
      '@&#8203;octo-org/team &lt;img src=x onerror=alert(1)&gt; [click](https:&#8203;//evil.example) https:&#8203;//evil.example www&#8203;.evil.example #&#8203;12 a|b',
    );
    expect(mdCode('a`b|c\nd')).toBe("`a'b\\|c\\nd`");
  });

  it('plan -o markdown: names, errors, warnings, blocked reasons, and the details block', () => {
    const plan = {
      formatVersion: 2,
      changes: [{ resourceKind: 'Webhook', name: HOSTILE, action: 'update', adopt: false, changes: [], reasons: [{ code: 'adopted', message: HOSTILE }], blocked: { code: 'replace-not-allowed', message: HOSTILE } }],
      summary: { create: 0, update: 1, replace: 0, delete: 0, adopt: 0, noop: 0 },
      errors: [HOSTILE],
      warnings: [{ code: 'orphan', message: `\`\`\`\n${HOSTILE}` }],
    } as unknown as Plan;
    const md = renderMarkdown(plan);
    neutral(md);
    expect(md.match(/^```/gm)!.length % 2).toBe(0);
    // one table row per change: the pipe in the name did not add a column
    expect(md.split('\n').filter((l) => l.startsWith('| `~`'))[0]!.split(/(?<!\\)\|/)).toHaveLength(7);
  });

  it('redacts before escaping: the output boundary knows the encodings of a secret, not these escapes of them', () => {
    const secret = 'Sx-9<&>|@q\u001bz';
    registerSecrets(secret);
    for (const out of [mdText(`e ${secret}`), mdHtml(`e ${secret}`), mdCode(`e ${secret}`), mdFenced(`e ${secret}`), printable(`e ${secret}`)]) {
      expect(out).not.toContain('Sx-9');
      expect(out).toContain('redacted');
    }
  });

  it('the apply summary', () => {
    neutral(outcomeMarkdown([{ resourceKind: 'Webhook', name: HOSTILE, action: 'create', result: 'failed', durationMs: 1, error: HOSTILE }]));
  });
});

/** A repository whose main holds one webhook manifest, and a branch `pr` adding `file` with `text`. */
async function pullRequestRepo(prefix: string, file: string, text: string): Promise<string> {
  const repo = await mkdtemp(path.join(tmpdir(), prefix));
  initRepo(repo);
  await mkdir(path.join(repo, 'm'));
  await writeFile(path.join(repo, 'm', 'base.yaml'), hook('base', 'https://hooks.example.com/base'));
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'base');
  git(repo, 'checkout', '-q', '-b', 'pr');
  await writeFile(path.join(repo, 'm', file), text);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'pr');
  return repo;
}

describe("a manifest whose name, keys and values hold line breaks (the pull request's author writes them)", () => {
  let repo: string;
  beforeAll(async () => {
    repo = await pullRequestRepo(
      'govops-preview-lines-',
      'forge.yaml',
      'apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: "x\\nm/base.yaml:1:1: forged"\nspec:\n  "u\\n/close": 1\n  url: https://hooks.example.com/f\n  global: false\n  notificationType: ["a\\n/label ~x"]\n  actionType: triggered\n',
    );
  });
  afterAll(() => rm(repo, { recursive: true, force: true }));

  it('each diagnostic is one line of the "Validation failed" block (as `govops validate` prints it): no forged line, no line the author starts', async () => {
    const r = await runGovops(['preview', 'm', '--base', 'main'], { cwd: repo, env: { GOVOPS_URL: undefined } });
    expect(r.code, r.stderr).toBe(1);
    const block = /#### Validation failed\n\n```text\n([\s\S]*?)\n```/.exec(r.stdout)?.[1];
    expect(block, r.stdout).toBeDefined();
    const lines = block!.split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    // every line is a diagnostic of the file it is in, starting with its location
    for (const l of lines) expect(l).toMatch(/^m\/forge\.yaml:\d+:\d+: /);
    expect(block).toContain('Webhook/x\\nm/base.yaml:1:1: forged');
    // no line of the comment starts with the author's text
    expect(r.stdout.split('\n').filter((l) => l.startsWith('/'))).toEqual([]);
  });
});

describe('a valid manifest whose annotation key holds a line break', () => {
  let repo: string;
  beforeAll(async () => {
    repo = await pullRequestRepo(
      'govops-preview-keys-',
      'ann.yaml',
      hook('ann', 'https://hooks.example.com/ann').replace('  name: ann\n', '  name: ann\n  annotations:\n    "a\\n- spec.url = \\"https://hooks.example.com/ann\\"\\n/close": v\n'),
    );
  });
  afterAll(() => rm(repo, { recursive: true, force: true }));

  it("each field change is one line of the diff block: the key's break is shown as \\n, it forges no diff line", async () => {
    const r = await runGovops(['preview', 'm', '--base', 'main'], { cwd: repo, env: { GOVOPS_URL: undefined } });
    expect(r.code, r.stderr).toBe(2);
    const block = /\*\*Manifest\*\* \(new\):\n\n```diff\n([\s\S]*?)\n```/.exec(r.stdout)?.[1];
    expect(block, r.stdout).toBeDefined();
    const lines = block!.split('\n');
    for (const l of lines) expect(l).toMatch(/^(\+ (metadata|spec)\.| {6}# m\/ann\.yaml:)/);
    expect(block).toContain('+ metadata.annotations.a\\n- spec.url = "https:');
    expect(r.stdout.split('\n').filter((l) => l.startsWith('/') || l.startsWith('- spec.url'))).toEqual([]);
  });
});
