/**
 * Parse one manifest file's text: YAML documents -> validated manifests + diagnostics with
 * line/column. Pure (no I/O): the loader reads files, tests and benches call this directly.
 */
import type { Document, LineCounter, YAMLError } from 'yaml';
import { NATURAL_KEY_FIELDS, SECRET_KEYS, isIntegrationType } from '../kinds/registry.js';
import { FORBIDDEN_KEYS, MAX_ALIAS_COUNT, depthExceeds, forbiddenKeyPaths, precheck, MAX_DEPTH } from './hostile.js';
import { makeLocator, type Locator } from './locate.js';
import { fastParseDocuments, type FastDoc } from './jsyaml.js';
import { annotationIssues } from './annotations.js';
import { REF_PLACEHOLDER, isSecretRef, replaceRefs, toPointer, type RefIssue } from './refs.js';
import { validateAgainst, type SchemaIssue } from './schemas.js';
import { suggestion } from './suggest.js';
import { yamlLib } from './yaml-lib.js';
import { API_VERSION, type Diagnostic, type LoadedManifest, type Manifest } from './types.js';
import { isPlainObject } from '../util/object.js';
import { withArticle } from '../util/strings.js';

export interface ParseOptions {
  /** Every warning is an error (`validate --strict`). */
  strict?: boolean;
  /** The text is a document of a stream (`-`, a render's output), which no .govopsignore applies to. */
  stream?: boolean;
}

export interface ParseResult {
  manifests: LoadedManifest[];
  diagnostics: Diagnostic[];
}

const KINDS = ['Integration', 'Webhook', 'DataSource'];
/** A YAML 1.1 merge key: YAML 1.2 (what govops reads) has none, `<<` is an ordinary key the author did not mean. */
const MERGE_KEY = '<<';
/** Keys refused anywhere in a manifest (one walk finds both kinds). */
const REFUSED_KEYS: ReadonlySet<string> = new Set([...FORBIDDEN_KEYS, MERGE_KEY]);
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
  const source: SourceText = { text, file, dir, options, lineCounter };
  for (const doc of docs) readDocument(doc, source, manifests, diagnostics);
  return { manifests, diagnostics };
}

/** The file a document comes from, and how to place offsets in it. */
interface SourceText {
  text: string;
  file: string;
  dir: string;
  options: ParseOptions;
  lineCounter: LineCounter;
}

/** One YAML document (full path): its manifest, or the diagnostics that say why there is none. */
function readDocument(doc: Document.Parsed, src: SourceText, manifests: LoadedManifest[], diagnostics: Diagnostic[]): void {
  const { text, file, lineCounter } = src;
  const docStart = doc.range?.[0] ?? 0;
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const problems = [...doc.errors, ...doc.warnings];
  if (problems.length) {
    // (the search for an unclosed flow collection scans the document's text: once, not per error of a hostile file)
    let flowSearched = false;
    for (const p of problems) {
      diagnostics.push(yamlProblem(p, text, file, at, doc, !flowSearched));
      if (p.code === 'BAD_INDENT') flowSearched = true;
    }
    return;
  }
  if (doc.contents === null) return; // empty document
  const tagProblem = text.includes('!') ? findTag(doc, text) : undefined;
  if (tagProblem) {
    diagnostics.push({ file, ...at(tagProblem.offset), severity: 'error', message: `YAML: tag ${tagProblem.tag} is not allowed (only plain YAML data)` });
    return;
  }
  const dangling = text.includes('*') ? findDanglingAlias(doc) : undefined;
  if (dangling) {
    const message = `YAML: the alias *${dangling.name} has no anchor &${dangling.name} before it in this document (anchors do not carry across documents: write the value here, or the anchor earlier in this document)`;
    diagnostics.push({ file, ...at(dangling.offset), severity: 'error', message });
    return;
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    diagnostics.push({ file, ...at(docStart), severity: 'error', message: `YAML: ${err instanceof Error ? err.message : String(err)} (alias expansion limited to ${MAX_ALIAS_COUNT})` });
    return;
  }
  if (value === null || value === undefined) return;
  const locator = makeLocator(doc, lineCounter, file, docStart);
  if (depthExceeds(value)) {
    diagnostics.push({ file, ...at(docStart), severity: 'error', message: `nesting deeper than ${MAX_DEPTH} levels` });
    return;
  }
  const result = checkDocument(value, locator, src.options);
  for (const d of result.diagnostics) diagnostics.push({ ...d, file });
  if (result.manifest) {
    const source = locator.value([]);
    manifests.push({ manifest: result.manifest, source, dir: src.dir, locate: (path) => locator.value(path) });
  }
}

/** A YAML error or warning as a diagnostic (an unclosed quote placed where it opens). */
function yamlProblem(
  p: YAMLError,
  text: string,
  file: string,
  at: (offset: number) => { line: number; column: number },
  doc: Document,
  searchFlow: boolean,
): Diagnostic {
  const dup = p.code === 'DUPLICATE_KEY' ? duplicateKey(doc, p.pos[0]) : undefined;
  if (dup) {
    const first = at(dup.first);
    const message = `YAML: duplicate key \`${dup.key}\`: it is written twice in this mapping (first at line ${first.line}, column ${first.column}): keep one`;
    return { file, ...at(p.pos[0]), severity: 'error', message };
  }
  const opener = p.code === 'MISSING_CHAR' ? unclosedQuote(text, p.message, p.pos[0]) : undefined;
  if (opener !== undefined) {
    return { file, ...at(opener), severity: 'error', message: `YAML: the string quoted here is never closed (missing closing ${text[opener]})` };
  }
  const flow = p.code === 'BAD_INDENT' && searchFlow ? unclosedFlow(text, p.message, p.pos[0], doc.range ?? [0, text.length, text.length]) : undefined;
  if (flow !== undefined) {
    const [what, close] = text[flow] === '[' ? ['sequence', ']'] : ['mapping', '}'];
    return { file, ...at(flow), severity: 'error', message: `YAML: the flow ${what} opened here with \`${text[flow]}\` is never closed: end it with \`${close}\`` };
  }
  if (p.code === 'BLOCK_AS_IMPLICIT_KEY' && colonInValue(text, p.pos[0])) {
    // `url: https://h:8080/x: y`, `password: pa: ss`: the value itself is not repeated (it may be a credential)
    return { file, ...at(p.pos[0]), severity: 'error', message: 'YAML: this value holds `: ` (a colon and a space), which YAML reads as a nested mapping: put the value in quotes' };
  }
  const msg = p.code === 'TAG_RESOLVE_FAILED' ? `${firstLine(p.message)}: custom tags are not allowed` : firstLine(p.message);
  return { file, ...at(p.pos[0]), severity: 'error', message: `YAML: ${msg}` };
}

const NOWHERE: Locator = { value: () => ({ file: '', line: 0, column: 0 }), key: () => ({ file: '', line: 0, column: 0 }), written: () => undefined };

/**
 * The common case: js-yaml read the text (jsyaml.ts) and every document is valid. Positions are only
 * needed later (locate), so `yaml` parses the file then, once. Any diagnostic: undefined (the caller
 * takes the full path, which gives every diagnostic its position).
 */
function fastPath(fast: FastDoc[], text: string, file: string, dir: string, options: ParseOptions): ParseResult | undefined {
  const manifests: LoadedManifest[] = [];
  // The file parsed with positions, once, and its documents by the line their content starts on (the first of a
  // line, as a search would find it): a manifest located later finds its document without a pass over the file's.
  let full: { byLine: Map<number, Document.Parsed>; lineCounter: LineCounter } | undefined;
  const locatorFor = (line: number): Locator | undefined => {
    if (!full) {
      const { LineCounter, parseAllDocuments } = yamlLib();
      const lineCounter = new LineCounter();
      const byLine = new Map<number, Document.Parsed>();
      for (const d of parseAllDocuments(text, { lineCounter, uniqueKeys: true }) as Document.Parsed[]) {
        const start = (d.contents as { range?: number[] } | null)?.range?.[0];
        if (start === undefined) continue;
        const at = lineCounter.linePos(start).line;
        if (!byLine.has(at)) byLine.set(at, d);
      }
      full = { byLine, lineCounter };
    }
    const doc = full.byLine.get(line);
    return doc ? makeLocator(doc, full.lineCounter, file, doc.range[0]) : undefined;
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

/**
 * Where a flow collection yaml found unterminated ("... must be sufficiently indented and end with a ]",
 * reported at the next line) opens, when no bracket closes it anywhere after: the innermost unmatched opener
 * before `end`, in its document. A collection closed later (a line inside it indented too little) keeps yaml's position.
 */
function unclosedFlow(text: string, message: string, end: number, [docStart, , docEnd]: readonly number[]): number | undefined {
  if (!/end with an? [\]}]/.test(message)) return undefined;
  let depth = 0;
  let opener: number | undefined;
  for (let i = Math.min(end, text.length) - 1; i >= docStart!; i--) {
    const c = text[i];
    if (c === ']' || c === '}') depth++;
    else if (c === '[' || c === '{') {
      if (depth === 0) {
        opener = i;
        break;
      }
      depth--;
    }
  }
  if (opener === undefined) return undefined;
  depth = 0;
  for (let i = opener; i < Math.min(docEnd!, text.length); i++) {
    const c = text[i];
    if (c === '[' || c === '{') depth++;
    else if ((c === ']' || c === '}') && --depth === 0) return undefined;
  }
  return opener;
}

/** Whether the rest of the line from `offset` holds `: ` (or ends with `:`) outside a comment. */
function colonInValue(text: string, offset: number): boolean {
  const end = text.indexOf('\n', offset);
  const line = text.slice(offset, end < 0 ? text.length : end).replace(/\s#.*$/, '').trimEnd();
  return line.includes(': ') || line.includes(':\t') || line.endsWith(':');
}

/** The scalar key written again at `offset`, and where it was first written in its mapping. */
function duplicateKey(doc: Document, offset: number): { key: string; first: number } | undefined {
  let found: { key: string; first: number } | undefined;
  const { isScalar, visit } = yamlLib();
  visit(doc, {
    Map(_key, map) {
      const second = map.items.find((p) => isScalar(p.key) && p.key.range?.[0] === offset);
      if (!second || !isScalar(second.key)) return undefined;
      const value = second.key.value;
      const first = map.items.find((p) => isScalar(p.key) && p.key.value === value);
      if (first && isScalar(first.key) && first !== second) found = { key: String(value), first: first.key.range?.[0] ?? offset };
      return visit.BREAK;
    },
  });
  return found;
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

/**
 * The first alias with no anchor of its name before it in its document (yaml throws on it in toJS, placeless).
 * One pass in document order, as yaml resolves aliases (its own resolve() would visit the document per alias).
 */
function findDanglingAlias(doc: Document): { name: string; offset: number } | undefined {
  let found: { name: string; offset: number } | undefined;
  const anchors = new Set<string>();
  const { isAlias, visit } = yamlLib();
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        if (anchors.has(node.source)) return undefined;
        found = { name: node.source, offset: node.range?.[0] ?? 0 };
        return visit.BREAK;
      }
      const anchor = (node as { anchor?: string }).anchor;
      if (anchor) anchors.add(anchor);
      return undefined;
    },
  });
  return found;
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

/** Record a diagnostic at `path` of the document (its key or its value). */
type Report = (path: ReadonlyArray<string | number>, message: string, target?: 'key' | 'value', severity?: Diagnostic['severity']) => void;

/** Envelope, schema and credential checks of one parsed document. */
export function checkDocument(value: unknown, locator: Locator, options: ParseOptions): DocResult {
  const diagnostics: DocResult['diagnostics'] = [];
  const obj = isPlainObject(value) ? value : undefined;
  const kind = typeof obj?.kind === 'string' ? obj.kind : undefined;
  const meta = isPlainObject(obj?.metadata) ? obj.metadata : undefined;
  const name = typeof meta?.name === 'string' ? meta.name : undefined;
  const push: Report = (path, message, target = 'value', severity = 'error') => {
    const loc = target === 'key' ? locator.key(path) : locator.value(path);
    diagnostics.push({ line: loc.line, column: loc.column, kind, name, severity: options.strict ? 'error' : severity, message });
  };
  if (!obj) {
    push([], 'a manifest must be a mapping with apiVersion, kind, metadata and spec');
    return { diagnostics };
  }
  if (envelopeIsWrong(obj, push, options.stream === true)) return { diagnostics };
  // Secret references: allowed in place of strings in config, deleteCredentials and a webhook's secret.
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  const refs = withRefPlaceholders(obj, kind, spec);
  for (const issue of refs.issues) push(issue.path, issue.message, issue.target);
  checkIdentityRefs(kind, spec?.type, refs.paths, push);
  checkSchema(refs.checked, refs.paths, push, locator);
  if (spec) {
    for (const literal of plainCredentials(kind, spec)) {
      push(literal, `\`${String(literal[literal.length - 1])}\` is a plain literal: write it as { fromEnv: NAME } or { fromFile: PATH }`, 'value', 'warning');
    }
  }
  for (const issue of annotationIssues(kind, spec, meta?.annotations)) {
    push(['metadata', 'annotations', issue.annotation], issue.message, issue.target ?? 'value', issue.severity);
  }
  if (diagnostics.some((d) => d.severity === 'error')) return { diagnostics };
  return { manifest: obj as unknown as Manifest, diagnostics };
}

/** An unknown apiVersion or kind, or JavaScript object machinery among the keys: reported, nothing else checked. */
function envelopeIsWrong(obj: Record<string, unknown>, push: Report, stream: boolean): boolean {
  if (obj.apiVersion !== undefined && obj.apiVersion !== API_VERSION) {
    const skip = stream ? 'not a govops document? leave it out of the stream' : 'not a govops file? list it in a .govopsignore';
    push(['apiVersion'], `unknown apiVersion \`${String(obj.apiVersion)}\`: govops manifests use ${API_VERSION} (${skip})`);
    return true;
  }
  if (obj.kind !== undefined && !KINDS.includes(String(obj.kind))) {
    push(['kind'], `unknown kind \`${String(obj.kind)}\`: must be Integration, Webhook or DataSource${suggestion(String(obj.kind), KINDS)}`);
    return true;
  }
  const forbidden = forbiddenKeyPaths(obj, REFUSED_KEYS);
  for (const path of forbidden) {
    const message =
      path[path.length - 1] === MERGE_KEY
        ? '`<<` is a YAML merge key, which govops does not read (YAML 1.2 has none: it would be a field named `<<`): write the fields out in this mapping'
        : `the key \`${String(path[path.length - 1])}\` is not allowed in a manifest (it names JavaScript object machinery, never a field)`;
    push(path, message, 'key');
  }
  return forbidden.length > 0;
}

/**
 * The document with each secret reference (in config, deleteCredentials, a webhook's secret) replaced by a
 * placeholder string for the schema, the references' JSON pointers, and the issues of malformed ones.
 */
function withRefPlaceholders(
  obj: Record<string, unknown>,
  kind: string | undefined,
  spec: Record<string, unknown> | undefined,
): { checked: unknown; paths: Set<string>; issues: RefIssue[] } {
  const issues: RefIssue[] = [];
  const paths = new Set<string>();
  if (!spec) return { checked: obj, paths, issues };
  // Copied only along the way to a reference (replaceRefs): the checked value shares the rest of the document.
  let specCopy: Record<string, unknown> | undefined;
  const fields = kind === 'Webhook' ? ['secret'] : kind === 'DataSource' ? [] : ['config', 'deleteCredentials'];
  for (const f of fields) {
    if (!(f in spec)) continue;
    const v = replaceRefs(spec[f], ['spec', f], issues, paths);
    if (v !== spec[f]) (specCopy ??= { ...spec })[f] = v;
  }
  return { checked: specCopy ? { ...obj, spec: specCopy } : obj, paths, issues };
}

/**
 * Identity fields are never secret references: the natural key derived from them (a host lower-cased) is
 * stored in the state file and printed, where the redactor, knowing only the exact value, would miss it.
 */
function checkIdentityRefs(kind: string | undefined, type: unknown, refPaths: ReadonlySet<string>, push: Report): void {
  if (kind !== 'Integration' || !isIntegrationType(type)) return;
  for (const field of NATURAL_KEY_FIELDS[type]) {
    if (refPaths.has(`/spec/config/${field}`)) {
      push(['spec', 'config', field], `\`config.${field}\` is the identity of ${withArticle(type)} integration: it cannot be a secret reference (govops stores and prints it); write the value itself`);
    }
  }
}

/** The manifest schema's issues; at a secret reference, only those a string value could not fix. */
function checkSchema(checked: unknown, refPaths: ReadonlySet<string>, push: Report, locator: Locator): void {
  const issues: SchemaIssue[] = validateAgainst('manifest.json', checked);
  for (const raw of issues) {
    const issue = { ...raw, message: naming(raw.path, raw.target, quotedAsWritten(raw, locator)) };
    const severity = issue.severity ?? 'error';
    const pointer = toPointer(issue.path);
    // (an issue of the key itself, an unknown or unused field, is about the field, not about its value being a reference)
    if (refPaths.has(pointer) && issue.target !== 'key') {
      if (VALUE_KEYWORDS.has(issue.keyword)) continue;
      const message = issue.message.replace(`a string \`${REF_PLACEHOLDER}\``, 'a secret reference').replace(`\`${REF_PLACEHOLDER}\``, 'a secret reference');
      push(issue.path, `${message} (a secret reference stands for a string: write the value itself here)`, issue.target, severity);
      continue;
    }
    push(issue.path, issue.message, issue.target, severity);
  }
}

/**
 * A value's issue names its field (`spec.config.port must be a number, not a string \`abc\``): the position alone
 * points at the value, and a reader of a PR comment or a CI log does not have the file beside it. An issue of a key
 * (missing, unknown, not allowed) names its key already.
 */
function naming(path: ReadonlyArray<string | number>, target: SchemaIssue['target'], message: string): string {
  if (target === 'key' || path.length === 0) return message;
  const field = path.map((seg, i) => (typeof seg === 'number' ? `[${seg}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg) ? `${i ? '.' : ''}${seg}` : `[${JSON.stringify(seg)}]`)).join('');
  return /^(must|is|lists) /.test(message) ? `\`${field}\` ${message}` : `\`${field}\`: ${message}`;
}

/**
 * "Put it in quotes" names the value as written, not as YAML read it: `012345678901` is the number 12345678901
 * (an account id would lose its leading zero), `1.10` is 1.1, `0x1F` is 31.
 */
function quotedAsWritten(issue: SchemaIssue, locator: Locator): string {
  const m = /\(put it in quotes: "(.*)"\)$/.exec(issue.message);
  if (!m) return issue.message;
  const written = locator.written(issue.path);
  if (written === undefined || written === m[1]) return issue.message;
  return `${issue.message.slice(0, m.index)}(put it in quotes as written: "${written}"; YAML reads ${written} as ${m[1]!})`;
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
