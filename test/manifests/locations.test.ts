/** Where and what `validate` tells a manifest author (audit-locations): each diagnostic at the offending text. */
import { describe, expect, it } from 'vitest';
import { at, parse } from './helpers.js';

const hook = (name: string, spec = '  url: https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n') =>
  `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n${spec}`;


describe('diagnostic locations and messages', () => {
  it('an alias with no anchor is reported at the alias, naming it, not at the document start', () => {
    const text = hook('a', '  url: https://h.example.com/x\n  global: *nothere\n  notificationType: [modelCreated]\n  actionType: triggered\n');
    const res = parse(text);
    expect(res.diagnostics).toHaveLength(1);
    const d = res.diagnostics[0]!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, '*nothere'));
    expect(d.message).toContain('*nothere');
    expect(d.message).not.toContain('alias expansion limited');
  });

  it('an anchor of an earlier document is not one of this document: the alias says so, at the alias', () => {
    const text = `${hook('a', '  url: &u https://h.example.com/x\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n')}---\n${hook('b', '  url: *u\n  global: false\n  notificationType: [modelCreated]\n  actionType: triggered\n')}`;
    const res = parse(text);
    expect(res.manifests.map((m) => m.manifest.metadata.name)).toEqual(['a']);
    const d = res.diagnostics[0]!;
    expect({ line: d.line, column: d.column }).toEqual(at(text, '*u'));
    expect(d.message).toMatch(/anchors do not carry across documents/);
  });
});
