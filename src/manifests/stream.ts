/**
 * Manifest streams (pure): a multi-document YAML text read from standard input (`govops plan -`) or from a
 * render command's output (the daemon's `--render`), e.g. `kustomize build overlays/prod`. Each document is
 * parsed on its own, so a diagnostic names the document and the line in the whole stream:
 * `-:doc 3:12:5: Integration/x: ...` (document 3 of standard input, line 12 of the stream, column 5). The size
 * limit of one manifest file applies to each document; the stream as a whole may hold many.
 */
import { documentMarkers } from './hostile.js';
import { parseManifestText, type ParseOptions, type ParseResult } from './parse.js';
import type { SourceLocation } from './types.js';

/** The name of standard input among manifest paths. */
export const STDIN_PATH = '-';
/** A stream larger than this is refused (each document is also held to the one-file limit). */
export const MAX_STREAM_BYTES = 64 * 1024 * 1024;
/** Documents in one stream at most: five times the largest set govops is measured at (20,000), and far from memory's end. */
export const MAX_STREAM_DOCUMENTS = 100_000;

export interface StreamDocument {
  /** 1-based number of the document in the stream. */
  index: number;
  /** 1-based line of the stream where the document's text starts. */
  line: number;
  text: string;
}

const MARKER = /^---(?:[ \t]|$)/;
const END = /^\.\.\.(?:[ \t]|$)/;
const CONTENT = /^\s*[^\s#]/;

/**
 * Split a stream at its document markers (`---` at the start of a line; YAML ends a document there whatever
 * it is inside). A marker before any content opens the first document rather than ending an empty one.
 */
export function splitStream(text: string): StreamDocument[] {
  const lines = text.split('\n');
  const docs: StreamDocument[] = [];
  let start = 0;
  let content = false;
  let ended = false;
  const close = (end: number): void => {
    // with the line break that ends its last line (a CRLF stream's last `\r` alone would be read as part of a value)
    const text = lines.slice(start, end).join('\n') + (end < lines.length ? '\n' : '');
    docs.push({ index: docs.length + 1, line: start + 1, text });
    start = end;
    content = false;
    ended = false;
  };
  lines.forEach((raw, i) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw; // a CRLF stream's markers are markers too
    if (MARKER.test(line)) {
      if (content || ended) close(i);
      content = true; // the marker itself opens this document
      return;
    }
    if (END.test(line)) {
      ended = true;
      return;
    }
    if (CONTENT.test(line)) {
      if (ended) close(i);
      content = true;
    }
  });
  if (start < lines.length && (content || docs.length === 0)) close(lines.length);
  return docs;
}

/** The label of one document of a stream in diagnostics and messages. */
export function documentLabel(label: string, index: number): string {
  return `${label}:doc ${index}`;
}

/**
 * Parse every document of a stream. Line numbers count from the start of the stream (each document's are
 * shifted by the lines before it).
 */
export function parseStream(text: string, label: string, dir: string, options: ParseOptions = {}): ParseResult {
  const out: ParseResult = { manifests: [], diagnostics: [] };
  if (Buffer.byteLength(text, 'utf8') > MAX_STREAM_BYTES) {
    out.diagnostics.push({ file: label, line: 1, column: 1, severity: 'error', message: `the stream is larger than ${MAX_STREAM_BYTES} bytes` });
    return out;
  }
  if (documentMarkers(text, MAX_STREAM_DOCUMENTS) >= MAX_STREAM_DOCUMENTS) {
    out.diagnostics.push({ file: label, line: 1, column: 1, severity: 'error', message: `the stream holds more than ${MAX_STREAM_DOCUMENTS} documents` });
    return out;
  }
  for (const doc of splitStream(text)) {
    const res = parseManifestText(doc.text, documentLabel(label, doc.index), dir, { ...options, stream: true });
    const shift = doc.line - 1;
    const moved = (loc: SourceLocation): SourceLocation => ({ ...loc, line: loc.line + shift });
    for (const m of res.manifests) {
      const locate = m.locate;
      out.manifests.push({ ...m, source: moved(m.source), locate: (p) => moved(locate(p)) });
    }
    for (const d of res.diagnostics) out.diagnostics.push({ ...d, line: d.line + shift });
  }
  return out;
}
