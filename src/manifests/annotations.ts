/**
 * Checks of the govops annotations of one manifest (`govops/delete`, `govops/suspend`, `govops/ignore-fields`;
 * src/service/annotations.ts): value syntax, ignorable paths, and an unknown `govops/*` annotation (a typo would
 * otherwise be silently ignored: a warning with a "did you mean").
 */
import {
  DELETE_ANNOTATION,
  GOVOPS_ANNOTATIONS,
  IGNORE_FIELDS_ANNOTATION,
  SUSPEND_ANNOTATION,
  booleanAnnotationProblem,
  ignoreFieldProblem,
  splitIgnoreFields,
} from '../service/annotations.js';
import { ignoreFieldFacts, isSensitiveKey } from '../kinds/registry.js';
import { isPlainObject, valueAt } from '../util/object.js';
import { isSecretRef } from './refs.js';
import { configShapes } from './shapes.js';
import { suggestion } from './suggest.js';
import { withArticle } from '../util/strings.js';

export interface AnnotationIssue {
  /** The annotation's name (the diagnostic points at its value, or at its key with `target: 'key'`). */
  annotation: string;
  /** `key`: the name itself is wrong (an unknown annotation); default: its value. */
  target?: 'key' | 'value';
  message: string;
  severity: 'error' | 'warning';
}

/** A secret reference or a credential key anywhere inside `v`. */
function holdsCredential(v: unknown): boolean {
  if (isSecretRef(v)) return true;
  if (Array.isArray(v)) return v.some(holdsCredential);
  if (isPlainObject(v)) return Object.entries(v).some(([k, x]) => isSensitiveKey(k) || holdsCredential(x));
  return false;
}

export function annotationIssues(kind: string | undefined, spec: Record<string, unknown> | undefined, annotations: unknown): AnnotationIssue[] {
  if (!isPlainObject(annotations)) return [];
  const out: AnnotationIssue[] = [];
  for (const [name, value] of Object.entries(annotations)) {
    if (!name.startsWith('govops/')) continue;
    if (!GOVOPS_ANNOTATIONS.includes(name)) {
      out.push({ annotation: name, target: 'key', severity: 'warning', message: `unknown govops annotation \`${name}\`${suggestion(name, GOVOPS_ANNOTATIONS) || ` (known: ${GOVOPS_ANNOTATIONS.join(', ')})`}` });
      continue;
    }
    if (typeof value !== 'string') continue; // the schema reports it
    if (name === DELETE_ANNOTATION || name === SUSPEND_ANNOTATION) {
      const problem = booleanAnnotationProblem(value);
      if (problem) out.push({ annotation: name, severity: 'error', message: `${name} ${problem}` });
      continue;
    }
    if (name === IGNORE_FIELDS_ANNOTATION) out.push(...ignoreFieldIssues(kind, spec, value));
  }
  return out;
}

function ignoreFieldIssues(kind: string | undefined, spec: Record<string, unknown> | undefined, value: string): AnnotationIssue[] {
  const out: AnnotationIssue[] = [];
  const paths = splitIgnoreFields(value);
  const issue = (message: string, severity: AnnotationIssue['severity'] = 'error'): void => {
    out.push({ annotation: IGNORE_FIELDS_ANNOTATION, severity, message: `${IGNORE_FIELDS_ANNOTATION}: ${message}` });
  };
  if (paths.length === 0) issue('lists no field: write comma-separated paths, e.g. "config.port, config.audit.enabled"');
  if (kind !== 'Integration' && kind !== 'Webhook') return out;
  const type = typeof spec?.type === 'string' ? spec.type : undefined;
  for (const p of paths) {
    const problem = ignoreFieldProblem(kind, p, ignoreFieldFacts(type));
    if (problem) {
      issue(problem);
      continue;
    }
    if (kind !== 'Integration') continue;
    const parts = p.split('.');
    if (holdsCredential(valueAt(spec, parts))) {
      issue(`\`${p}\` holds a credential or a secret reference: the service masks credentials, so govops could not keep another team's value`);
      continue;
    }
    // A field govops does not know is never compared anyway: ignoring it changes nothing.
    const shape = type ? configShapes()[type] : undefined;
    let node = shape;
    for (const part of parts.slice(1)) node = node?.fields?.[part];
    if (shape && !node) {
      const known = Object.keys(shape.fields ?? {});
      issue(`\`${p}\` is not ${withArticle(type ?? '')} config field govops compares, so ignoring it changes nothing${suggestion(parts[1]!, known)}`, 'warning');
    }
  }
  return out;
}
