/**
 * Removing the operator's secret values from text that came from outside (the service's script and
 * dry-run answers) before it goes into the comment. The values are the ones resolved from secret
 * references in this run; values shorter than 4 characters are left alone (they would garble the text).
 */
export const REDACTED = '(redacted)';

export function secretRedactor(values: readonly string[]): (text: string) => string {
  const forms = new Set<string>();
  for (const v of values) {
    if (v.length < 4) continue;
    forms.add(v);
    forms.add(JSON.stringify(v).slice(1, -1));
    forms.add(encodeURIComponent(v));
  }
  const list = [...forms].filter((f) => f.length >= 4).sort((a, b) => b.length - a.length);
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const f of list) if (out.includes(f)) out = out.split(f).join(REDACTED);
    return out;
  };
}
