/**
 * Human wording of a schema's `if` conditions, so a message can say *why* a field is required
 * or not allowed ("required when authenticationType is userPassword").
 */
import { schemaDocuments } from './schema-files.js';
import { isPlainObject } from '../util/object.js';


function show(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** "type is <kind> and config.authenticationType is oAuth" */
export function describeIf(ifSchema: unknown, prefix = ''): string {
  if (!isPlainObject(ifSchema) || !isPlainObject(ifSchema.properties)) return '';
  const parts: string[] = [];
  for (const [key, sub] of Object.entries(ifSchema.properties)) {
    if (!isPlainObject(sub)) continue;
    if ('const' in sub) parts.push(`${prefix}${key} is ${show(sub.const)}`);
    else if (Array.isArray(sub.enum)) parts.push(`${prefix}${key} is one of ${sub.enum.map(show).join(', ')}`);
    else if (isPlainObject(sub.properties)) {
      const inner = describeIf(sub, `${prefix}${key}.`);
      if (inner) parts.push(inner);
    }
  }
  return parts.join(' and ');
}

let conditions: WeakMap<object, string> | undefined;
function build(): void {
  conditions = new WeakMap();
  const walk = (node: unknown, cond: string): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item, cond);
      return;
    }
    if (!isPlainObject(node)) return;
    if (cond) conditions!.set(node, cond);
    for (const [key, value] of Object.entries(node)) {
      if (key === 'if') continue;
      if (key === 'then') walk(value, `when ${describeIf(node.if)}`);
      else if (key === 'else') walk(value, `unless ${describeIf(node.if)}`);
      else walk(value, cond);
    }
  };
  for (const doc of schemaDocuments().values()) walk(doc, '');
}

/** The condition under which a schema object applies ("when X is Y"), or ''. */
export function conditionOf(schema: unknown): string {
  if (!conditions) build();
  return isPlainObject(schema) ? (conditions!.get(schema) ?? '') : '';
}
