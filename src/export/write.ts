/**
 * The files `govops export` writes: manifests (one file per resource or one per kind) and the commented env
 * template of the secret variables. Rendering is pure (`renderExport`); `prepareExport` makes every check
 * before anything is written, `commitExport` then creates the files, never overwriting one unless asked.
 */
import { constants } from 'node:fs';
import { link, lstat, mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { yamlLib } from '../manifests/yaml-lib.js';
import { MAX_FILE_DOCUMENTS } from '../manifests/hostile.js';
import { parseManifestText } from '../manifests/parse.js';
import { UserError } from '../errors.js';
import { MAX_FILE_BYTES } from '../util/limits.js';
import { eachLimit } from '../util/map-limit.js';
import { printable } from '../util/terminal.js';
import type { ExportedResource, ExportKind, SecretVariable } from './resources.js';

/** A file name with no folder part and no control or invisible character. */
const PLAIN_FILE = /^[A-Za-z0-9._-]+$/;
/** Files written (and placed) at a time: as many as the manifest loader reads. */
const FILE_CONCURRENCY = 32;

export type Layout = 'resource' | 'kind';
export const ENV_TEMPLATE = 'secrets.env.template';
/** The temporary folder of an export, inside its output folder (removed after). */
const STAGING_PREFIX = '.govops-export-';

const KIND_FILE: Record<ExportKind, string> = { Integration: 'integrations', Webhook: 'webhooks', DataSource: 'data-sources' };
const KIND_PREFIX: Record<ExportKind, string> = { Integration: 'integration', Webhook: 'webhook', DataSource: 'data-source' };
const KIND_ORDER: readonly ExportKind[] = ['Integration', 'DataSource', 'Webhook'];

/**
 * Characters the YAML library writes as they are and a reader of the file does not see as they are: C1 controls,
 * bidirectional overrides and isolates, zero-width and other invisible format characters, line and paragraph
 * separators. Service text (another team's webhook name, a config value) is committed from an export and reviewed in
 * a diff, where they would show other text than YAML reads.
 */
const INVISIBLE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'g');

/**
 * The manifest as YAML; a string holding an INVISIBLE character is written double-quoted with each of them as its
 * `\uXXXX` escape (they occur nowhere else in the text then: keys and plain values hold none), read back the same.
 */
function yamlOf(manifest: ExportedResource['manifest']): string {
  const { Document, visit } = yamlLib();
  const doc = new Document(manifest);
  let escaped = false;
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'string' || !INVISIBLE.test(node.value)) return;
      node.type = 'QUOTE_DOUBLE';
      escaped = true;
    },
  });
  const text = doc.toString({ lineWidth: 0 });
  return escaped ? text.replace(INVISIBLE_ALL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : text;
}

function documentOf(r: ExportedResource): string {
  // the id is the service's text: escaped, so it cannot end the comment line and add YAML of its own
  const notes = (r.notes ?? []).map((line) => `# ${printable(line)}\n`).join('');
  return `# ${r.kind}/${r.name}: exported by govops export (live id ${printable(String(r.liveId))})\n${notes}${yamlOf(r.manifest)}`;
}

/** What one file of `--layout kind` may hold: what the manifest loader reads (manifests/hostile.ts `precheck`). */
export interface PartLimits {
  bytes: number;
  documents: number;
}
const SEPARATOR = '---\n';
const PART_LIMITS: PartLimits = { bytes: MAX_FILE_BYTES, documents: MAX_FILE_DOCUMENTS - 1 };

/**
 * The documents of one kind as files the loader reads back: `webhooks.yaml`, then `webhooks-2.yaml`, ... when
 * one file would pass its size or document limit (a file govops then refuses to read is no export). A single
 * document over the size limit gets a file of its own (the loader names it).
 */
function kindFiles(base: string, docs: readonly string[], limits: PartLimits): Array<[string, string]> {
  const parts: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const doc of docs) {
    const size = Buffer.byteLength(doc, 'utf8');
    if (current.length > 0 && (bytes + SEPARATOR.length + size > limits.bytes || current.length >= limits.documents)) {
      parts.push(current);
      current = [];
    }
    bytes = current.length > 0 ? bytes + SEPARATOR.length + size : size;
    current.push(doc);
  }
  if (current.length > 0) parts.push(current);
  return parts.map((part, i) => [i === 0 ? `${base}.yaml` : `${base}-${i + 1}.yaml`, part.join(SEPARATOR)]);
}

/** File name -> content. */
export function renderExport(
  resources: readonly ExportedResource[],
  variables: readonly SecretVariable[],
  layout: Layout,
  limits: PartLimits = PART_LIMITS,
): Map<string, string> {
  const files = new Map<string, string>();
  const sorted = [...resources].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (layout === 'kind') {
    for (const kind of KIND_ORDER) {
      const docs = sorted.filter((r) => r.kind === kind).map(documentOf);
      for (const [name, text] of kindFiles(KIND_FILE[kind], docs, limits)) files.set(name, text);
    }
  } else {
    for (const r of sorted) {
      const file = `${KIND_PREFIX[r.kind]}-${r.name}.yaml`;
      const prev = files.get(file);
      files.set(file, prev === undefined ? documentOf(r) : `${prev}${SEPARATOR}${documentOf(r)}`);
    }
  }
  if (variables.length > 0) files.set(ENV_TEMPLATE, envTemplate(variables));
  return files;
}

/** The env template: every variable the manifests read, each under a comment naming where it is used. */
export function envTemplate(variables: readonly SecretVariable[]): string {
  const lines = [
    '# The secrets the exported manifests read (fromEnv). The service never returns credentials:',
    '# fill in each value from where it is kept, and give the variables to govops plan/apply/run',
    '# (a secret store, the CI secrets, or `set -a; . ./this-file; set +a` from a copy kept out of Git).',
    '',
  ];
  for (const v of variables) lines.push(`# ${printable(`${v.resource} ${v.path}`)}`, `${v.name}=`);
  return `${lines.join('\n')}\n`;
}

/** `existing` with the entries of `fresh` whose variable it lacks appended; undefined when it lacks none. */
function mergeTemplate(existing: string, fresh: string): string | undefined {
  const have = new Set([...existing.matchAll(/^([A-Za-z_][A-Za-z0-9_]*)=/gm)].map((m) => m[1]));
  const lines = fresh.split('\n');
  const add: string[] = [];
  lines.forEach((line, i) => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(line);
    if (m && !have.has(m[1])) add.push(lines[i - 1] ?? '', line);
  });
  if (add.length === 0) return undefined;
  return `${existing.endsWith('\n') ? existing : `${existing}\n`}${add.join('\n')}\n`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * A file of the output folder, read only when it is a regular file: undefined when there is none, `null` when it is
 * not a regular file. The folder is often the repository's, which pull requests change, and a committed link (to an
 * env file of the operator's, to /proc/self/environ) was read through and its content written into the merged
 * template, a file of the folder ready to commit; a FIFO held the export forever. Opened without following a link
 * and without blocking.
 */
async function readRegular(file: string): Promise<string | undefined | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') return null;
    throw err;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** The env template already in the output folder, undefined when there is none; refused when it is not a regular file. */
async function readTemplate(file: string): Promise<string | undefined> {
  const text = await readRegular(file);
  if (text === null) throw notRegular(file);
  return text;
}

const notRegular = (file: string): UserError =>
  new UserError(`${printable(file)} is not a regular file (a symbolic link, a folder, a device or a FIFO): govops export neither reads nor replaces it: nothing written`, 'remove it, or pass --force to replace it with the template of this export');

/** An export checked and ready to write: nothing of it is on disk yet. */
export interface PreparedExport {
  readonly dir: string;
  /** File name -> the content to write (the env template merged with the one already in `dir`). */
  readonly files: ReadonlyMap<string, string>;
  readonly force: boolean;
}

const exists$ = (file: string): UserError => new UserError(`${file} exists: govops export does not replace files: nothing written`, 'export into an empty folder, or pass --force to replace them');

/**
 * Every check of an export, before anything is written or created (not even `dir`): file names, files that
 * exist (unless `force`), the env template to merge. A refusal leaves the folder as it was.
 */
export async function prepareExport(dir: string, files: ReadonlyMap<string, string>, force: boolean, leftOut: ReadonlySet<string> = new Set()): Promise<PreparedExport> {
  // Names are made from sanitised manifest names; checked again here: a plain file name inside `dir` (no folder
  // part, no `..`, no control character), whatever a service named its resources.
  for (const name of files.keys()) {
    if (!PLAIN_FILE.test(name) || name === '.' || name === '..') throw new UserError(`govops export: ${printable(JSON.stringify(name))} is not a plain file name: nothing written`, 'report this: export names are sanitised');
  }
  const merged = new Map(files);
  const template = files.get(ENV_TEMPLATE);
  if (template !== undefined && !force) {
    // an export into a folder that has a template (one more resource imported): its variables are added to it
    const existing = await readTemplate(path.join(dir, ENV_TEMPLATE));
    if (existing !== undefined) {
      const added = mergeTemplate(existing, template);
      if (added === undefined) merged.delete(ENV_TEMPLATE);
      else merged.set(ENV_TEMPLATE, added);
    }
  }
  if (!force) {
    for (const name of merged.keys()) {
      if (name === ENV_TEMPLATE) continue;
      const file = path.join(dir, name);
      if (await exists(file)) throw exists$(file);
    }
  }
  if (force && leftOut.size > 0) await refuseDropping(dir, merged, leftOut);
  return { dir, files: merged, force };
}

/**
 * `--force` replaces a file whole. A file of `--layout kind` holds every resource of its kind: re-exported with
 * `--select` (or `--kind`), it would lose the live resources the selection left out, and the next `apply --prune`
 * would delete them from the service. Refused when a file to replace holds a manifest of one of those (`leftOut`:
 * `Kind/name`); what is gone from the service may go.
 */
async function refuseDropping(dir: string, files: ReadonlyMap<string, string>, leftOut: ReadonlySet<string>): Promise<void> {
  for (const name of files.keys()) {
    if (name === ENV_TEMPLATE) continue;
    const file = path.join(dir, name);
    const text = await readRegular(file);
    if (typeof text !== 'string') continue;
    const dropped = parseManifestText(text, file, dir)
      .manifests.map((m) => `${m.manifest.kind}/${m.manifest.metadata.name}`)
      .filter((key) => leftOut.has(key));
    if (dropped.length === 0) continue;
    const shown = dropped.slice(0, 5).map(printable).join(', ') + (dropped.length > 5 ? ` and ${dropped.length - 5} more` : '');
    throw new UserError(
      `--force would replace ${printable(file)}, which holds ${shown}: live resources this export leaves out (--select or --kind), so the next apply with --prune would delete them: nothing written`,
      'export them too (leave out --select), use --layout resource (one file per resource), or export into another folder',
    );
  }
}

/**
 * Write a prepared export: every file is written in a temporary folder inside `dir` (`.govops-export-*`, its files
 * named `*.part`, which no manifest discovery reads), then moved into place (a new manifest by a hard link, which
 * never replaces a file; a replaced one and the env template by a rename). Inside, not beside: `dir`'s parent may be
 * one govops cannot write (the image's volume `/data`, whose parent is root's) or another filesystem (`dir` a mount
 * point: a link or rename across filesystems is EXDEV).
 * When one cannot be placed, those already placed are removed again: the folder has all the files or none of
 * the new ones. Returns the paths written.
 */
export async function commitExport(prepared: PreparedExport): Promise<string[]> {
  const { dir, files, force } = prepared;
  await mkdir(dir, { recursive: true });
  if (files.size === 0) return [];
  const staging = await mkdtemp(path.join(dir, STAGING_PREFIX));
  const staged = (name: string): string => path.join(staging, `${name}.part`);
  const placed: string[] = [];
  const place = async (name: string): Promise<void> => {
    const file = path.join(dir, name);
    if (force || name === ENV_TEMPLATE) await rename(staged(name), file);
    else {
      try {
        await link(staged(name), file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw exists$(file);
        throw err;
      }
    }
    placed.push(file);
  };
  // the template last: it is the one file an export may replace without --force
  const manifests = [...files.keys()].filter((name) => name !== ENV_TEMPLATE);
  const order = files.has(ENV_TEMPLATE) ? [...manifests, ENV_TEMPLATE] : manifests;
  try {
    // FILE_CONCURRENCY at a time (one after the other, 15,000 files took seconds of file-system round trips)
    await eachLimit([...files.keys()], FILE_CONCURRENCY, (name) => writeFile(staged(name), files.get(name)!, { flag: 'wx', mode: 0o644 }));
    await eachLimit(manifests, FILE_CONCURRENCY, place);
    if (files.has(ENV_TEMPLATE)) await place(ENV_TEMPLATE);
  } catch (err) {
    // only new manifests are removed: a file replaced by --force or the merged template cannot be restored,
    // and they are placed last or only with --force. Every placement under way has finished (eachLimit).
    if (!force) await Promise.all(placed.filter((f) => path.basename(f) !== ENV_TEMPLATE).map((f) => rm(f, { force: true })));
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return order.map((name) => path.join(dir, name));
}

/** Check, then write the files under `dir` (created when missing). Refuses to replace an existing file unless `force`. */
export async function writeExport(dir: string, files: ReadonlyMap<string, string>, force: boolean): Promise<string[]> {
  return commitExport(await prepareExport(dir, files, force));
}
