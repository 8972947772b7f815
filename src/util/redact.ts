/**
 * The one redactor. Every secret value in force (manifest secrets, the API token, the Git token, the
 * push-notification secret) is registered here, and every text that came from outside (service error
 * messages and bodies, webhook item errors, script-endpoint errors, Git stderr) passes through
 * `redactText` / `redactJsonText` at the output boundaries: stdout, stderr, the log, /status, /metrics,
 * a saved plan and the preview comment. String values only: never keys, never data govops reads back
 * (the state file holds no secret and does not pass here).
 *
 * Scoped to the secrets in force: the tokens of the run stay for the process's life (`add`); manifest
 * secrets are stamped with a generation (`inForce`) and released (`release`) once nothing that can still
 * be printed came from a reconcile that used them (the daemon: src/daemon/secrets-in-force.ts).
 *
 * A value is replaced in the forms an echo would carry it (src/util/secret-forms.ts: JSON-escaped, URL-encoded,
 * quoted and HTML-escaped as JavaScript, Go, .NET, Python and Java write them, nested up to three deep; and in base64;
 * each of the value and of its Unicode normalizations that differ from it: NFC, NFD, NFKC, NFKD),
 * in the text and in its decoded views (src/util/decoded-views.ts: its escapes decoded, up to 8 times over, at most 24
 * views of a text and 8 with base64 lines joined, so a bounded number of linear scans of it; a JSON text's values holding an escape are read through
 * their own views, each remembered with its redaction while the values in force stay the same, so an answer or a log
 * line repeating one does not read it again: `redactJsonText`). Userinfo in URLs
 * (`https://user:token@host`) is dropped too, also in a decoded view (`https:\/\/user:token@host`, percent-encoded). Whole forms only: text from outside is redacted before anything cuts,
 * splits or rewrites it (src/util/cut.ts).
 */

import { DECODABLE, decodedViews, viewMap } from './decoded-views.js';
import { HEAD, LiteralMatcher } from './literal-matcher.js';
import { base64Forms, byteListForms, csvFieldForms, type FramedForm, lineForms, secretForms } from './secret-forms.js';
import { dropUrlUserinfo, hasUrlUserinfo, urlUserinfoRanges } from './url-userinfo.js';

export { secretForms };

export const REDACTED = '[redacted]';

/** Shorter values are not registered: replacing every `abc` in every output would garble it. */
export const MIN_SECRET_LENGTH = HEAD;

/** A JSON (or Prometheus label) string literal; group 1 set when it is an object key (followed by `:`). */
const STRING_LITERAL = /"(?:[^"\\\n]|\\.)*"(\s*:)?/g;

/**
 * Which values a pass replaces: `all`, or `operator`: not the values only a manifest's author chose (`inForceAuthored`).
 * A Markdown document (the preview comment, `-o markdown`) is redacted in its parts before they are escaped
 * (util/markdown.ts, with every value); its last pass as a whole leaves the author's values out, because an author
 * who chooses a "secret" can choose one that matches the escaped text and so remove an escape or a line of the
 * document, and with it make a link or hide a word of govops' own verdict (docs/decisions.md).
 */
export type RedactScope = 'all' | 'operator';

/**
 * At most this many characters of JSON string values (and of their redacted copies) are remembered with their
 * redaction (`Redactor.redactLiteral`), the least recently used forgotten first: 16 MB at most (2 bytes a character),
 * a few megabytes of a manifest's values shown in /status and logged at each resync.
 */
export const LITERAL_MEMO_MAX_CHARS = 8 * 1024 * 1024;

export class Redactor {
  /** Values in force for the life of the process (the API token, the Git token, notification targets). */
  private readonly pinned = new Set<string>();
  /** Values of a reconcile's manifests, each with the last generation that resolved it. */
  private readonly scoped = new Map<string, number>();
  /** Values registered only as chosen by a manifest's author (a subset of `scoped`). */
  private readonly authored = new Set<string>();
  private current = 0;
  /**
   * Every form of the operator's values in force, and of the values only an author chose: each found in one pass of
   * a text. The operator's are replaced first, the author's in what is left (see `redactText`). Each holds the forms of
   * the values in its set, brought up to date when the values in force change (`matchers`): a value added or released
   * costs its own forms, not all of them again.
   */
  private operatorForms = new FormMatcher();
  private authoredForms = new FormMatcher();
  private readonly operatorValues = new Set<string>();
  private readonly authoredValues = new Set<string>();
  /** The forms of each value in force (worked out once per value, not at each change of the set). */
  private readonly formsOf = new Map<string, ValueForms>();
  private dirty = false;
  /**
   * JSON string values holding an escape (`\\ % & +`), by scope, with what `redactText` made of them under the
   * matchers in force (forgotten whenever they are remade): a value an answer or a log line repeats (a manifest's value
   * in /status at each request, in a resync's drift line at each resync) is read through its decoded views once.
   */
  private readonly literalMemo = new Map<string, string | null>();
  private literalMemoChars = 0;

  private changed(): void {
    this.dirty = true;
  }

  /** Register secret values for the life of the process (undefined, empty and too short ones are ignored). */
  add(...values: Array<string | undefined | null>): void {
    for (const v of values) {
      if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH || this.pinned.has(v)) continue;
      this.pinned.add(v);
      if (this.authored.delete(v) || !this.scoped.has(v)) this.changed();
    }
  }

  /** Whether `value` is one of the values registered for the life of the process (the operator's own credentials). */
  isPinned(value: string): boolean {
    return this.pinned.has(value);
  }

  /**
   * Whether `text` holds, anywhere in it, one of the values registered for the life of the process that is at least
   * `minLength` long (a token among the lines of an env file, in a JSON credentials file).
   */
  holdsPinned(text: string, minLength: number): boolean {
    for (const v of this.pinned) if (v.length >= minLength && text.includes(v)) return true;
    return false;
  }

  /**
   * Register secret values resolved from manifests: in force in the current generation (see `nextGeneration`)
   * and kept until a `release` says nothing from that generation can be printed any more.
   */
  inForce(...values: Array<string | undefined | null>): void {
    for (const v of values) {
      if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
      if (this.authored.delete(v) || (!this.scoped.has(v) && !this.pinned.has(v))) this.changed();
      this.scoped.set(v, this.current);
    }
  }

  /**
   * As `inForce`, for a value a manifest's author chose (a credential written as a literal, a file in the manifests'
   * own tree): replaced everywhere but in the last pass over a Markdown document (`RedactScope`). A value also
   * registered otherwise (the operator's variable holds the same) is the operator's.
   */
  inForceAuthored(...values: Array<string | undefined | null>): void {
    for (const v of values) {
      if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
      if (!this.scoped.has(v) && !this.pinned.has(v)) {
        this.authored.add(v);
        this.changed();
      }
      this.scoped.set(v, this.current);
    }
  }

  /** The generation values registered with `inForce` are stamped with now. */
  get generation(): number {
    return this.current;
  }

  /** Start a new generation (the daemon: at each reconcile, which resolves the manifests' secrets again). */
  nextGeneration(): number {
    return ++this.current;
  }

  /**
   * Forget the manifest values no generation from `oldest` on resolved: nothing that can still be printed
   * came from a reconcile that used them (a rotated-away secret). Values registered with `add` stay.
   */
  release(oldest: number): void {
    for (const [v, g] of this.scoped) {
      if (g >= oldest) continue;
      this.scoped.delete(v);
      this.authored.delete(v);
      if (!this.pinned.has(v)) this.changed();
    }
  }

  /** How many distinct values are in force. */
  get size(): number {
    let n = this.pinned.size;
    for (const v of this.scoped.keys()) if (!this.pinned.has(v)) n++;
    return n;
  }

  /** The matchers of the operator's values and of the author's (brought up to date after a change of the values in force). */
  private matchers(): { operator: FormMatcher | undefined; authored: FormMatcher | undefined } {
    if (this.dirty) {
      const inForce = new Set([...this.pinned, ...this.scoped.keys()]);
      const operator = new Set<string>();
      for (const v of inForce) if (!this.authored.has(v)) operator.add(v);
      this.operatorForms = this.follow(this.operatorForms, this.operatorValues, operator);
      this.authoredForms = this.follow(this.authoredForms, this.authoredValues, this.authored);
      for (const v of this.formsOf.keys()) if (!inForce.has(v)) this.formsOf.delete(v);
      this.dirty = false;
      this.literalMemo.clear();
      this.literalMemoChars = 0;
    }
    return { operator: this.operatorForms.size ? this.operatorForms : undefined, authored: this.authoredForms.size ? this.authoredForms : undefined };
  }

  /**
   * `matcher`, holding the forms of `held`, made to hold those of `wanted` instead: the values that left taken out and
   * those that came added; or, when more leave than stay (a daemon's rotation of most of its credentials), a matcher made
   * afresh of those that stay.
   */
  private follow(matcher: FormMatcher, held: Set<string>, wanted: ReadonlySet<string>): FormMatcher {
    let leaving = 0;
    for (const v of held) if (!wanted.has(v)) leaving++;
    if (leaving > wanted.size) {
      matcher = new FormMatcher();
      held.clear();
    } else if (leaving > 0) {
      for (const v of held) {
        if (wanted.has(v)) continue;
        matcher.deleteForms(this.formsOf.get(v)!);
        held.delete(v);
      }
    }
    for (const v of wanted) {
      if (held.has(v)) continue;
      matcher.addForms(this.valueForms(v));
      held.add(v);
    }
    return matcher;
  }

  /** The forms of `value` and of its Unicode normalizations (worked out once while it is in force). */
  private valueForms(value: string): ValueForms {
    let fs = this.formsOf.get(value);
    if (!fs) {
      fs = { forms: [], framed: [] };
      for (const n of normalizedForms(value)) {
        fs.forms.push(...secretForms(n).filter((f) => f.length >= MIN_SECRET_LENGTH), ...base64Forms(n), ...byteListForms(n), ...lineForms(n));
        fs.framed.push(...csvFieldForms(n));
      }
      this.formsOf.set(value, fs);
    }
    return fs;
  }

  /**
   * Nothing in `text` would be replaced: no registered form and no URL userinfo occurs anywhere in it or in its
   * decoded views (a text that is no JSON document: `redactOutput`).
   */
  private untouched(text: string, scope: RedactScope): boolean {
    const { operator, authored } = this.matchers();
    const matchers = scope === 'all' ? [operator, authored] : [operator];
    if (matchers.some((m) => m?.test(text)) || hasUrlUserinfo(text)) return false;
    // a view's URL userinfo too (`https:\/\/user:pw@h`, `https%3A%2F%2Fuser%3Apw%40h`): dropped in the text
    for (const v of decodedViews(text)) if (matchers.some((m) => m?.test(v.text)) || hasUrlUserinfo(v.text)) return false;
    return true;
  }

  /**
   * Free text: every form of every registered value (of the scope), and URL userinfo, replaced; in the text and in its
   * decoded views (src/util/decoded-views.ts: a form found there is replaced in the text, whole escapes). The operator's
   * values first, then the author's in what is left: an author chooses values, and one overlapping an operator's value
   * in the text (ending in its first characters, or starting with its last) would otherwise decide how much of it, or of
   * the text around it, is replaced, and the output would tell a right guess of its characters from a wrong one.
   */
  redactText(text: string, scope: RedactScope = 'all'): string {
    const { operator, authored } = this.matchers();
    const out = dropUrlUserinfo(text);
    const second = scope === 'all' ? authored : undefined;
    // Both read from the same views: where the operator's values changed nothing, the author's are looked for in the
    // same text (its views read once, not twice); where they did, in what is left, through its own views.
    const [mine, theirs] = spansOf(operator, second, out);
    if (mine.length) return second ? replaceForms(second, replaceSpans(out, mine)) : replaceSpans(out, mine);
    return replaceSpans(out, theirs);
  }

  /**
   * JSON text (or Prometheus exposition text): only inside string values, so numbers, keys, structure and
   * formatting stay as they are and the result is still valid JSON. Keys are structure, never a secret: a
   * secret `cred` must not turn the key `config.credential` into `config.[redacted]ential`.
   *
   * A form or URL userinfo in a value is in the text; a form only a decoded view holds is in a value holding an escape.
   * So: one scan of the text for the forms and userinfo; when it finds none, only the values holding an escape are
   * redacted, each read through its own views (remembered: `redactLiteral`), never the whole text's views again.
   */
  redactJsonText(text: string, scope: RedactScope = 'all'): string {
    const { operator, authored } = this.matchers();
    const raw = (operator?.test(text) ?? false) || (scope === 'all' && (authored?.test(text) ?? false)) || hasUrlUserinfo(text);
    if (!raw && !DECODABLE.test(text)) return text;
    return text.replace(STRING_LITERAL, (lit: string, key: string | undefined) => {
      if (key !== undefined) return lit;
      const inner = lit.slice(1, -1);
      if (!raw && !DECODABLE.test(inner)) return lit;
      const red = this.redactLiteral(inner, scope);
      return red === inner ? lit : `"${red}"`;
    });
  }

  /**
   * `redactText` of a JSON string value; one holding an escape is remembered (up to LITERAL_MEMO_MAX_CHARS, least
   * recently used first out) while the matchers stay the same: its decoded views, up to 33 scans of it, are read once
   * however often an answer or a log line repeats it.
   */
  private redactLiteral(inner: string, scope: RedactScope): string {
    if (!DECODABLE.test(inner)) return this.redactText(inner, scope);
    // one map for both scopes, the key tagged with its scope
    const key = `${scope === 'all' ? 'a' : 'o'}${inner}`;
    const known = this.literalMemo.get(key);
    if (known !== undefined) {
      this.literalMemo.delete(key);
      this.literalMemo.set(key, known);
      return known ?? inner;
    }
    const red = this.redactText(inner, scope);
    const size = key.length + (red === inner ? 0 : red.length);
    if (size > LITERAL_MEMO_MAX_CHARS) return red;
    for (const [k, v] of this.literalMemo) {
      if (this.literalMemoChars + size <= LITERAL_MEMO_MAX_CHARS) break;
      this.literalMemo.delete(k);
      this.literalMemoChars -= k.length + (v?.length ?? 0);
    }
    // copies of their own: a slice of the answer or the line would keep all of it alive
    this.literalMemo.set(own(key), red === inner ? null : own(red));
    this.literalMemoChars += size;
    return red;
  }

  /**
   * A chunk written to stdout/stderr: JSON documents keep their shape (`redactJsonText`, which reads only the values
   * holding an escape through their views, not the whole document's), other text is redacted whole.
   */
  redactOutput(text: string, scope: RedactScope = 'all'): string {
    const t = text.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        JSON.parse(text);
        return this.redactJsonText(text, scope);
      } catch {
        // not one JSON document: redact as text
      }
    }
    if (this.untouched(text, scope)) return text;
    return this.redactText(text, scope);
  }

}

/** Unicode's normalization forms. */
const NORMALIZATIONS = ['NFC', 'NFD', 'NFKC', 'NFKD'] as const;

/**
 * The value and each of its Unicode normalizations that differs from it: an echo may carry a value normalized (a
 * service, a browser or a file system composing or decomposing `ä`, folding `ﬁ` or a full-width digit), so each has
 * its forms. One for a value no normalization changes (every ASCII value), up to five.
 */
function normalizedForms(value: string): Set<string> {
  const out = new Set([value]);
  for (const f of NORMALIZATIONS) out.add(value.normalize(f));
  return out;
}

/** The forms of one value: what `FormMatcher` adds and deletes together. */
interface ValueForms {
  forms: string[];
  framed: FramedForm[];
}

/**
 * The forms of a set of values, and their framed forms (`csvFieldForms`): a framed form holds a form, so it is looked for
 * only in a text or view a form was found in (no scan more of a text holding none), and replaced without its frame.
 * Values come and go (`addForms`, `deleteForms`); a form two values share stays while either does.
 */
class FormMatcher extends LiteralMatcher {
  private readonly framed = new LiteralMatcher();
  /** Each framed form's frames (one per value that has it: two values may frame the same characters differently). */
  private readonly frames = new Map<string, FramedForm[]>();

  addForms(value: ValueForms): void {
    for (const f of value.forms) this.add(f);
    for (const f of value.framed) {
      const list = this.frames.get(f.form);
      if (list) list.push(f);
      else this.frames.set(f.form, [f]);
      this.framed.add(f.form);
    }
  }

  deleteForms(value: ValueForms): void {
    for (const f of value.forms) this.delete(f);
    for (const f of value.framed) {
      const list = this.frames.get(f.form) ?? [];
      const at = list.findIndex((g) => g.head === f.head && g.tail === f.tail);
      if (at >= 0) list.splice(at, 1);
      if (!list.length) this.frames.delete(f.form);
      this.framed.delete(f.form);
    }
  }

  /** `spans`, and where there are any, each framed form's without its frame (overlapping them: `replaceSpans` joins). */
  formSpans(text: string): Array<[number, number]> {
    const spans = this.spans(text);
    if (!spans.length || this.framed.size === 0) return spans;
    for (let m = this.framed.next(text); m; m = this.framed.next(text, m.at + 1)) {
      for (const { head, tail } of this.frames.get(m.literal)!) spans.push([m.at + head, m.at + m.literal.length - tail]);
    }
    return spans;
  }
}

/** A flat copy of `s` (no slice or concatenation of a larger string it would keep alive). */
function own(s: string): string {
  return Buffer.from(s, 'utf16le').toString('utf16le');
}

/**
 * Every form of `matcher` in `text` and in its decoded views replaced by REDACTED: each found in a view covers the
 * escapes its characters came from. Overlapping matches are replaced as one; matches that only touch stay two.
 */
function replaceForms(matcher: FormMatcher, text: string): string {
  return replaceSpans(text, spansOf(undefined, matcher, text)[1]);
}

/**
 * Where the forms of `first` and of `second` are in `text` and in its decoded views (each found in a view covers the
 * escapes its characters came from): the views made once for both. A view's URL userinfo goes with `first`'s (the text's
 * own is dropped before: `dropUrlUserinfo`).
 */
function spansOf(first: FormMatcher | undefined, second: FormMatcher | undefined, text: string): [Array<[number, number]>, Array<[number, number]>] {
  const spans: [Array<[number, number]>, Array<[number, number]>] = [first ? first.formSpans(text) : [], second ? second.formSpans(text) : []];
  for (const v of decodedViews(text)) {
    const found = [[...(first ? first.formSpans(v.text) : []), ...urlUserinfoRanges(v.text)], second ? second.formSpans(v.text) : []];
    if (found[0]!.length === 0 && found[1]!.length === 0) continue;
    const from = viewMap(v);
    for (const k of [0, 1]) for (const [a, b] of found[k]!) spans[k]!.push([from[a]!, endOf(from, b, text)]);
  }
  return spans;
}

/** `spans` of `text` replaced by REDACTED: overlapping ones as one; ones that only touch stay two. */
function replaceSpans(text: string, spans: Array<[number, number]>): string {
  if (spans.length === 0) return text;
  spans.sort((x, y) => x[0] - y[0] || y[1] - x[1]);
  let out = '';
  let done = 0;
  let [start, end] = spans[0]!;
  for (const [a, b] of spans) {
    if (a < end) {
      end = Math.max(end, b);
      continue;
    }
    out += text.slice(done, start) + REDACTED;
    done = end;
    [start, end] = [a, b];
  }
  return out + text.slice(done, start) + REDACTED + text.slice(end);
}

/**
 * Where a match of a view ending before its character `b` ends in the text: past the whole escape of character b - 1.
 * A character that is no escape in the text (not `\\`, `%` nor `&` where it comes from) ends right after it: what
 * follows it before character b was removed (a line break and indentation the `unwrap` view joined), not decoded.
 */
function endOf(from: Int32Array, b: number, text: string): number {
  if (b > 0 && b < from.length - 1) {
    const at = from[b - 1]!;
    const c = text.charCodeAt(at);
    if (c !== 92 && c !== 37 && c !== 38 && from[b]! > at + 1) return at + 1;
  }
  const last = from.length - 1;
  let k = b;
  while (k < last && k > 0 && from[k] === from[k - 1]) k++;
  return from[k]!;
}

/**
 * The redactor of this process's outputs (stdout, stderr, the log, the daemon's answers): the tokens of the run,
 * and the manifest secrets in force (scoped by generation: the daemon releases a rotated-away one).
 */
export const secretRedactor = new Redactor();

/** Register values for the life of the process (tokens, notification targets). */
export function registerSecrets(...values: Array<string | undefined | null>): void {
  secretRedactor.add(...values);
}

/**
 * A credential of govops' own found *inside* a text holds this many characters at least: a token, a long password.
 * A shorter one (a database password `govops`) could be part of a manifest's own secret by chance (a user name
 * `govops_system`): only the whole value equal to it counts then.
 */
export const HELD_CREDENTIAL_MIN_LENGTH = 16;

/**
 * Whether `text` is, or holds among other text, one of govops' own credentials of this run (the API token, a Git token,
 * the push-notification secret, the status token, a notification target, the state database's password): never a
 * manifest's secret. A file a CI job wrote beside the manifests is refused with the token as its whole content and with
 * the token on one of its lines (`GOVOPS_TOKEN=…`, `{"token": "…"}`).
 */
export function holdsOperatorCredential(text: string): boolean {
  return secretRedactor.isPinned(text) || secretRedactor.isPinned(text.trim()) || secretRedactor.holdsPinned(text, HELD_CREDENTIAL_MIN_LENGTH);
}

/** Register values resolved from manifests, in force for the current generation (see `Redactor.inForce`). */
export function registerSecretsInForce(...values: Array<string | undefined | null>): void {
  secretRedactor.inForce(...values);
}

/** Register values a manifest's author chose, in force for the current generation (see `Redactor.inForceAuthored`). */
export function registerAuthoredSecretsInForce(...values: Array<string | undefined | null>): void {
  secretRedactor.inForceAuthored(...values);
}

export function redactText(text: string): string {
  return secretRedactor.redactText(text);
}

export function redactJsonText(text: string): string {
  return secretRedactor.redactJsonText(text);
}

/** A JSON-like value with every string value (never a key) redacted: a copy, or the value itself when untouched. */
export function redactJsonValue<T>(value: T): T {
  const text = JSON.stringify(value);
  const out = secretRedactor.redactJsonText(text);
  return out === text ? value : (JSON.parse(out) as T);
}

/** A writable stream whose `write` redacts (every other property is the stream's own, e.g. isTTY). */
export function redactingStream<S extends NodeJS.WritableStream>(stream: S, redactor: Redactor = secretRedactor, scope: RedactScope = 'all'): S {
  return new Proxy(stream, {
    get(target, prop, _receiver) {
      if (prop === 'write') {
        return (chunk: unknown, ...rest: unknown[]) => {
          const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : chunk;
          const out = typeof text === 'string' ? redactor.redactOutput(text, scope) : text;
          return (target.write as (...a: unknown[]) => boolean).call(target, out, ...rest);
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
