/**
 * Checking and shaping a config against the interface tables (interface.ts): validation as the service
 * does it (types, required, conditions, enums, ranges, stated rules; unknown fields are dropped), and the
 * views a service may plausibly give back (defaults filled, defaults omitted, unset fields as null).
 */
import type { FieldSpec, Obj } from './interface.js';
import { isPlainObject } from '../../util/object.js';

export interface FieldIssue {
  path: string;
  message: string;
}

function typeOk(spec: FieldSpec, v: unknown): boolean {
  switch (spec.type) {
    case 'string':
      return typeof v === 'string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'boolean':
      return typeof v === 'boolean';
    case 'object':
      return isPlainObject(v);
    case 'array':
      return Array.isArray(v) && (spec.items !== 'string' || v.every((x) => typeof x === 'string'));
  }
}

const A: Record<FieldSpec['type'], string> = {
  string: 'a string',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array of strings',
};

/**
 * Validate `value` against the fields; returns the known fields only (as sent). Issues are appended.
 * `null` is read as absent.
 */
export function checkFields(
  fields: Record<string, FieldSpec>,
  value: Obj,
  autoBootstrap: boolean,
  prefix: string,
  issues: FieldIssue[],
): Obj {
  const out: Obj = {};
  for (const [key, spec] of Object.entries(fields)) {
    const path = `${prefix}.${key}`;
    const v = value[key];
    if (v === undefined || v === null) {
      const req = spec.required;
      if (req === true) issues.push({ path, message: 'is required' });
      else if (req && req.holds(value, autoBootstrap)) issues.push({ path, message: `is required ${req.text}` });
      continue;
    }
    if (!typeOk(spec, v)) {
      issues.push({ path, message: `must be ${A[spec.type]}` });
      continue;
    }
    if (spec.enum && !spec.enum.includes(v as string)) {
      issues.push({ path, message: `must be one of ${spec.enum.join(', ')}` });
      continue;
    }
    if (typeof v === 'number') {
      if ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max)) {
        const range = spec.max === undefined ? `at least ${spec.min}` : `between ${spec.min} and ${spec.max}`;
        issues.push({ path, message: `must be ${range}` });
        continue;
      }
    }
    if (spec.rule && typeof v === 'string' && !spec.rule.test(v)) {
      issues.push({ path, message: spec.rule.text });
      continue;
    }
    out[key] = spec.fields && isPlainObject(v) ? checkFields(spec.fields, v, autoBootstrap, path, issues) : structuredClone(v);
  }
  return out;
}

/** Every default filled in: absent fields with a default, absent objects with a default ("disabled"). */
export function fillDefaults(fields: Record<string, FieldSpec>, value: Obj): Obj {
  const out: Obj = structuredClone(value);
  for (const [key, spec] of Object.entries(fields)) {
    if (out[key] === undefined && spec.default !== undefined) out[key] = structuredClone(spec.default);
    const v = out[key];
    if (spec.fields && isPlainObject(v)) out[key] = fillDefaults(spec.fields, v);
  }
  return out;
}

/** Fields equal to their default left out (objects left with nothing are left out too). */
export function omitDefaults(fields: Record<string, FieldSpec>, value: Obj): Obj {
  const out: Obj = {};
  for (const [key, v] of Object.entries(value)) {
    const spec = fields[key];
    if (!spec) {
      out[key] = v;
      continue;
    }
    if (spec.fields && isPlainObject(v)) {
      const inner = omitDefaults(spec.fields, v);
      if (Object.keys(inner).length > 0) out[key] = inner;
      continue;
    }
    if (spec.default !== undefined && JSON.stringify(spec.default) === JSON.stringify(v)) continue;
    out[key] = v;
  }
  return out;
}

/** Every known field without a value given as `null` (objects that are present: their fields too). */
export function nullUnset(fields: Record<string, FieldSpec>, value: Obj): Obj {
  const out: Obj = { ...value };
  for (const [key, spec] of Object.entries(fields)) {
    const v = out[key];
    if (v === undefined) out[key] = null;
    else if (spec.fields && isPlainObject(v)) out[key] = nullUnset(spec.fields, v);
  }
  return out;
}

export function formatFieldIssues(issues: readonly FieldIssue[]): string {
  return issues.map((i) => `${i.path} ${i.message}`).join('; ');
}
