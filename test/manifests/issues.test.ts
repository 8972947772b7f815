/**
 * Schema messages never repeat a credential field's value, whatever the rule it breaks (enum, pattern, format,
 * bounds): the value may be a literal secret written by mistake, and messages go to CI logs and PR comments.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { toIssues } from '../../src/manifests/issues.js';

const SECRET = 'hunter2-literal-secret';

function issuesFor(schema: object, doc: unknown): string[] {
  const ajv = new Ajv2020({ allErrors: true, verbose: true, strict: false });
  ajv.addFormat('hostname', /^[a-z.]+$/);
  const validate = ajv.compile(schema);
  expect(validate(doc)).toBe(false);
  return toIssues(validate.errors ?? [], doc).map((i) => i.message);
}

describe('messages about credential fields', () => {
  const rules: Array<[string, object]> = [
    ['enum', { enum: ['a', 'b'] }],
    ['pattern', { pattern: '^x' }],
    ['pattern with a description', { pattern: '^x', description: 'starts with x' }],
    ['format', { format: 'hostname' }],
  ];
  for (const [name, rule] of rules) {
    it(`${name}: the rule is named, the value is not`, () => {
      const schema = { type: 'object', properties: { password: { type: 'string', ...rule }, host: { type: 'string', ...rule } } };
      const messages = issuesFor(schema, { password: SECRET, host: 'visible-value-1' });
      const hidden = messages.filter((m) => !m.includes('visible-value-1'));
      expect(messages.join('\n')).not.toContain(SECRET);
      expect(hidden.length).toBeGreaterThan(0); // the credential's issue is reported, without its value
      expect(messages.some((m) => m.includes('visible-value-1'))).toBe(true); // other fields still show theirs
    });
  }

  it('bounds: a credential number is not repeated either', () => {
    const messages = issuesFor({ type: 'object', properties: { password: { type: 'number', minimum: 10, maximum: 20 } } }, { password: 987654321 });
    expect(messages.join('\n')).not.toContain('987654321');
    expect(messages).toHaveLength(1);
  });
});
