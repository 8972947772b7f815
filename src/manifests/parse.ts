/**
 * Parse one manifest file's text: YAML documents -> validated manifests + diagnostics with
 * line/column. Pure (no I/O): the loader reads files, tests and benches call this directly.
 */
import type { Document, LineCounter } from 'yaml';
import { NATURAL_KEY_FIELDS, SECRET_KEYS, isIntegrationType } from '../kinds/registry.js';
import { MAX_ALIAS_COUNT, depthExceeds, forbiddenKeyPaths, precheck, MAX_DEPTH } from './hostile.js';
import { makeLocator, type Locator } from './locate.js';
import { fastParseDocuments, type FastDoc } from './jsyaml.js';
import { annotationIssues } from './annotations.js';
import { REF_PLACEHOLDER, isSecretRef, replaceRefs, toPointer, type RefIssue } from './refs.js';
import { validateAgainst, type SchemaIssue } from './schemas.js';
import { suggestion } from './suggest.js';
import { yamlLib } from './yaml-lib.js';
import { API_VERSION, type Diagnostic, type LoadedManifest, type Manifest } from './types.js';
import { isPlainObject } from '../util/object.js';

export interface ParseOptions {
  /** Every warning is an error (`validate --strict`). */
  strict?: boolean;
}

export interface ParseResult {
  manifests: LoadedManifest[];
  diagnostics: Diagnostic[];
}

const KINDS = ['Integration', 'Webhook', 'DataSource'];
const CORE_TAGS = new Set(
  ['str', 'int', 'float', 'bool', 'null', 'map', 'seq'].map((t) => `tag:yaml.org,2002:${t}`),
);
/** Schema keywords whose failure says nothing when the value is a secret reference (unknown until resolved). */
const VALUE_KEYWORDS: ReadonlySet<string> = new Set(['pattern', 'format', 'minLength', 'maxLength']);

function firstLine(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}

export function parseManifestText(text: string, file: string, dir: string, options: ParseOptions = {}): ParseResult {
  const diagnostics: Diagnostic[] = [];
  const manifests: LoadedManifest[] = [];
  const fileDiag = (message: string, offset = 0): void => {
    const pos = offset ? positionOf(text, offset) : { line: 1, col: 1 };
    diagnostics.push({ file, line: pos.line, column: pos.col, severity: 'error', message });
  };
  const bad = precheck(text);
  if (bad) {
    fileDiag(bad.message, bad.offset);
    return { manifests, diagnostics };
  }
  const fast = fastParseDocuments(text);
  if (fast) {
    const res = fastPath(fast, text, file, dir, options);
    if (res) return res;
  }
  const { LineCounter, parseAllDocuments } = yamlLib();
  const lineCounter = new LineCounter();
  let docs: Document.Parsed[];
  try {
    const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true });
    docs = Array.isArray(parsed) ? parsed : [];
  } catch (err) {
    fileDiag(`cannot parse YAML: ${err instanceof Error ? err.message : String(err)}`);
    return { manifests, diagnostics };
  }
  for (const doc of docs) {
    const docStart = doc.range?.[0] ?? 0;
    const at = (offset: number) => {
      const { line, col } = lineCounter.linePos(offset);
      return { line, column: col };
    };
    const problems = [...doc.errors, ...doc.warnings];
    if (problems.length) {
      for (const p of problems) {
        const opener = p.code === 'MISSING_CHAR' ? unclosedQuote(text, p.message, p.pos[0]) : undefined;
        if (opener !== undefined) {
          diagnostics.push({ file, ...at(opener), severity: 'error', message: `YAML: the string quoted here is never closed (missing closing ${text[opener]})` });
          continue;
        }
        const pos = at(p.pos[0]);
        const msg = p.code === 'TAG_RESOLVE_FAILED' ? `${firstLine(p.message)}: custom tags are not allowed` : firstLine(p.message);
        diagnostics.push({ file, ...pos, severity: 'error', message: `YAML: ${msg}` });
      }
      continue;
    }
    if (doc.contents === null) continue; // empty document
    const tagProblem = text.includes('!') ? findTag(doc, text) : undefined;
    if (tagProblem) {
      diagnostics.push({ file, ...at(tagProblem.offset), severity: 'error', message: `YAML: tag ${tagProblem.tag} is not allowed (only plain YAML data)` });
      continue;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      diagnostics.push({ file, ...at(docStart), severity: 'error', message: `YAML: ${err instanceof Error ? err.message : String(err)} (alias expansion limited to ${MAX_ALIAS_COUNT})` });
      continue;
    }
    if (value === null || value === undefined) continue;
    const locator = makeLocator(doc, lineCounter, file, docStart);
    if (depthExceeds(value)) {
      diagnostics.push({ file, ...at(docStart), severity: 'error', message: `nesting deeper than ${MAX_DEPTH} levels` });
      continue;
    }
    const result = checkDocument(value, locator, options);
    for (const d of result.diagnostics) diagnostics.push({ ...d, file });
    if (result.manifest) {
      const source = locator.value([]);
      manifests.push({ manifest: result.manifest, source, dir, locate: (path) => locator.value(path) });
    }
  }
  return { manifests, diagnostics };
}

const NOWHERE: Locator = { value: () => ({ file: '', line: 0, column: 0 }), key: () => ({ file: '', line: 0, column: 0 }) };

/**
 * The common case: js-yaml read the text (jsyaml.ts) and every document is valid. Positions are only
 * needed later (locate), so `yaml` parses the file then, once. Any diagnostic: undefined (the caller
 * takes the full path, which gives every diagnostic its position).
 */
function fastPath(fast: FastDoc[], text: string, file: string, dir: string, options: ParseOptions): ParseResult | undefined {
  const manifests: LoadedManifest[] = [];
  let full: { docs: Document.Parsed[]; lineCounter: LineCounter } | undefined;
  const locatorFor = (line: number): Locator | undefined => {
    if (!full) {
      const { LineCounter, parseAllDocuments } = yamlLib();
      const lineCounter = new LineCounter();
      full = { docs: parseAllDocuments(text, { lineCounter, uniqueKeys: true }) as Document.Parsed[], lineCounter };
    }
    const { docs, lineCounter } = full;
    const doc = docs.find((d) => {
      const start = (d.contents as { range?: number[] } | null)?.range?.[0];
      return start !== undefined && lineCounter.linePos(start).line === line;
    });
    return doc ? makeLocator(doc, lineCounter, file, doc.range[0]) : undefined;
  };
  for (const doc of fast) {
    if (doc.value === null || doc.value === undefined) continue;
    if (depthExceeds(doc.value)) return undefined;
    const result = checkDocument(doc.value, NOWHERE, options);
    if (result.diagnostics.length || !result.manifest) return undefined;
    const source = { file, line: doc.line, column: doc.column };
    let locator: Locator | undefined;
    manifests.push({
      manifest: result.manifest,
      source,
      dir,
      locate: (path) => (locator ??= locatorFor(doc.line))?.value(path) ?? source,
    });
  }
  return { manifests, diagnostics: [] };
}

/** Where an unclosed quoted string opens: the last unescaped quote of that kind before the end it ran to. */
function unclosedQuote(text: string, message: string, end: number): number | undefined {
  const m = /Missing closing (["'])quote/.exec(message);
  if (!m) return undefined;
  const q = m[1]!;
  for (let i = Math.min(end, text.length) - 1; i >= 0; i--) {
    if (text[i] !== q) continue;
    if (q === '"' && text[i - 1] === '\\') continue;
    if (q === "'" && text[i - 1] === "'") {
      i--;
      continue;
    }
    return i;
  }
  return undefined;
}

function positionOf(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let last = -1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    last = i;
  }
  return { line, col: offset - last };
}

function findTag(doc: Document, text: string): { tag: string; offset: number } | undefined {
  let found: { tag: string; offset: number } | undefined;
  const { visit } = yamlLib();
  visit(doc, {
    Node(_key, node) {
      const tag = (node as { tag?: string }).tag;
      if (tag && !CORE_TAGS.has(tag)) {
        // The node's range starts at its value: point at the tag written before it on that line.
        const start = node.range?.[0] ?? 0;
        let i = start - 1;
        while (i >= 0 && text[i] === ' ') i--;
        while (i >= 0 && !/[\s,[{]/.test(text[i]!)) i--;
        const offset = text[i + 1] === '!' ? i + 1 : start;
        found = { tag, offset };
        return visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

interface DocResult {
  manifest?: Manifest;
  diagnostics: Array<Omit<Diagnostic, 'file'>>;
}

/** Envelope, schema and credential checks of one parsed document. */
export function checkDocument(value: unknown, locator: Locator, options: ParseOptions): DocResult {
  const diagnostics: DocResult['diagnostics'] = [];
  const obj = isPlainObject(value) ? value : undefined;
  const kind = typeof obj?.kind === 'string' ? obj.kind : undefined;
  const meta = isPlainObject(obj?.metadata) ? obj.metadata : undefined;
  const name = typeof meta?.name === 'string' ? meta.name : undefined;
  const push = (path: ReadonlyArray<string | number>, message: string, target: 'key' | 'value' = 'value', severity: Diagnostic['severity'] = 'error') => {
    const loc = target === 'key' ? locator.key(path) : locator.value(path);
    diagnostics.push({ line: loc.line, column: loc.column, kind, name, severity: options.strict ? 'error' : severity, message });
  };
  if (!obj) {
    push([], 'a manifest must be a mapping with apiVersion, kind, metadata and spec');
    return { diagnostics };
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== API_VERSION) {
    push(['apiVersion'], `unknown apiVersion \`${String(obj.apiVersion)}\`: govops manifests use ${API_VERSION} (not a govops file? list it in a .govopsignore)`);
    return { diagnostics };
  }
  if (obj.kind !== undefined && !KINDS.includes(String(obj.kind))) {
    push(['kind'], `unknown kind \`${String(obj.kind)}\`: must be Integration, Webhook or DataSource${suggestion(String(obj.kind), KINDS)}`);
    return { diagnostics };
  }
  const forbidden = forbiddenKeyPaths(obj);
  if (forbidden.length) {
    for (const path of forbidden) push(path, `the key \`${String(path[path.length - 1])}\` is not allowed in a manifest (it names JavaScript object machinery, never a field)`, 'key');
    return { diagnostics };
  }
  // Secret references: allowed in place of strings in config, deleteCredentials and a webhook's secret.
  const refIssues: RefIssue[] = [];
  const refPaths = new Set<string>();
  let checked: unknown = obj;
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (spec) {
    const specCopy: Record<string, unknown> = { ...spec };
    const fields = kind === 'Webhook' ? ['secret'] : kind === 'DataSource' ? [] : ['config', 'deleteCredentials'];
    for (const f of fields) if (f in specCopy) specCopy[f] = replaceRefs(specCopy[f], ['spec', f], refIssues, refPaths);
    checked = { ...obj, spec: specCopy };
  }
  for (const issue of refIssues) push(issue.path, issue.message, issue.target);
  // Identity fields are never secret references: the natural key derived from them (a host lower-cased) is
  // stored in the state file and printed, where the redactor, knowing only the exact value, would miss it.
  const type = spec?.type;
  if (kind === 'Integration' && isIntegrationType(type)) {
    for (const field of NATURAL_KEY_FIELDS[type]) {
      if (refPaths.has(`/spec/config/${field}`)) {
        push(['spec', 'config', field], `\`config.${field}\` is the identity of a ${type} integration: it cannot be a secret reference (govops stores and prints it); write the value itself`);
      }
    }
  }
  const issues: SchemaIssue[] = validateAgainst('manifest.json', checked);
  for (const issue of issues) {
    const severity = issue.severity ?? 'error';
    const pointer = toPointer(issue.path);
    if (refPaths.has(pointer)) {
      if (VALUE_KEYWORDS.has(issue.keyword)) continue;
      const message = issue.message.replace(`a string \`${REF_PLACEHOLDER}\``, 'a secret reference').replace(`\`${REF_PLACEHOLDER}\``, 'a secret reference');
      push(issue.path, `${message} (a secret reference stands for a string: write the value itself here)`, issue.target, severity);
      continue;
    }
    push(issue.path, issue.message, issue.target, severity);
  }
  if (spec) {
    for (const literal of plainCredentials(kind, spec)) {
      push(literal, `\`${String(literal[literal.length - 1])}\` is a plain literal: write it as { fromEnv: NAME } or { fromFile: PATH }`, 'value', 'warning');
    }
  }
  for (const issue of annotationIssues(kind, spec, meta?.annotations)) {
    push(['metadata', 'annotations', issue.annotation], issue.message, 'value', issue.severity);
  }
  if (diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  return { manifest: obj as unknown as Manifest, diagnostics };
}

/** Paths of credential fields written as plain strings (SECRET_KEYS in config/deleteCredentials, webhook secret). */
export function plainCredentials(kind: string | undefined, spec: Record<string, unknown>): Array<Array<string | number>> {
  const found: Array<Array<string | number>> = [];
  if (kind === 'Webhook') {
    if (typeof spec.secret === 'string') found.push(['spec', 'secret']);
    return found;
  }
  if (kind === 'DataSource') return found;
  const path: Array<string | number> = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(i);
        walk(v[i]);
        path.pop();
      }
    } else if (isPlainObject(v) && !isSecretRef(v)) {
      for (const k in v) {
        const child = v[k];
        path.push(k);
        if (SECRET_KEYS.has(k) && typeof child === 'string') found.push([...path]);
        else walk(child);
        path.pop();
      }
    }
  };
  for (const field of ['config', 'deleteCredentials']) {
    path.push('spec', field);
    walk(spec[field]);
    path.length = 0;
  }
  return found;
}
