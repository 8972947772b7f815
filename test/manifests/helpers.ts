import { parseManifestText } from '../../src/manifests/parse.js';
import type { Diagnostic } from '../../src/manifests/types.js';

/** 1-based line/column of the first occurrence of `needle` in `text` (the fixture names its own positions). */
export function at(text: string, needle: string, nth = 0): { line: number; column: number } {
  let idx = -1;
  for (let i = 0; i <= nth; i++) {
    idx = text.indexOf(needle, idx + 1);
    if (idx < 0) throw new Error(`fixture has no ${needle}`);
  }
  const before = text.slice(0, idx);
  const line = before.split('\n').length;
  return { line, column: idx - before.lastIndexOf('\n') };
}

export function parse(text: string, strict = false) {
  return parseManifestText(text, 'm.yaml', '/tmp', { strict });
}

export function errors(text: string, strict = false): Diagnostic[] {
  return parse(text, strict).diagnostics.filter((d) => d.severity === 'error');
}

export function warnings(text: string): Diagnostic[] {
  return parse(text).diagnostics.filter((d) => d.severity === 'warning');
}

export function integration(type: string, body: string): string {
  return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: it\nspec:\n  type: ${type}\n${body}`;
}
