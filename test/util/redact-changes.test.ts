/**
 * The redactor's matchers follow the values in force: a change indexes the forms of the values that came and takes out
 * those of the values that left, not all of them again (isolated: it spies on LiteralMatcher's prototype).
 */
import { describe, expect, it, vi } from 'vitest';
import { LiteralMatcher } from '../../src/util/literal-matcher.js';
import { Redactor, REDACTED, secretForms } from '../../src/util/redact.js';
import { base64Forms, byteListForms } from '../../src/util/secret-forms.js';

describe('Redactor: a change of the values in force', () => {
  it('indexes the forms of the values that came and nothing more: one more value among thousands adds its own forms only', () => {
    const formsOf = (v: string): string[] => [...secretForms(v), ...base64Forms(v), ...byteListForms(v)];
    const many = Array.from({ length: 2000 }, (_, i) => `secret-${i}-${(i * 7919).toString(36)}`);
    const r = new Redactor();
    r.inForce(...many);
    r.inForceAuthored('authored-value-1');
    expect(r.redactText('x secret-5-2k3x')).toBe('x secret-5-2k3x');
    const add = vi.spyOn(LiteralMatcher.prototype, 'add');
    const del = vi.spyOn(LiteralMatcher.prototype, 'delete');
    const added = (): string[] => add.mock.calls.map(([f]) => f);
    const deleted = (): string[] => del.mock.calls.map(([f]) => f);
    try {
      r.inForce('one-more-value');
      expect(r.redactText('one-more-value')).toBe(REDACTED);
      expect(added()).toEqual(formsOf('one-more-value'));
      expect(deleted()).toEqual([]);
      add.mockClear();
      // the author's value becomes the operator's: it joins the operator's matcher and leaves the author's (which,
      // left with none, is made afresh: nothing to take out one by one)
      r.add('authored-value-1');
      expect(r.redactOutput('authored-value-1', 'operator')).toBe(REDACTED);
      expect(r.redactText('x authored-value-1')).toBe(`x ${REDACTED}`);
      expect(added()).toEqual(formsOf('authored-value-1'));
      expect(deleted()).toEqual([]);
      add.mockClear();
      del.mockClear();
      // a few released among thousands: their forms leave, nothing is indexed again
      r.nextGeneration();
      r.inForce(...many.slice(3), 'one-more-value', 'authored-value-1');
      r.release(r.generation);
      expect(r.redactText(`${many[1]} ${many[5]}`)).toBe(`${many[1]} ${REDACTED}`);
      expect(added()).toEqual([]);
      expect(deleted()).toEqual(many.slice(0, 3).flatMap(formsOf));
      del.mockClear();
      // the thousands released at once: the matcher is made afresh of the two that stay (fewer than those that leave)
      r.nextGeneration();
      r.inForce('one-more-value', 'authored-value-1');
      r.release(r.generation);
      expect(r.redactText(`${many[5]} one-more-value`)).toBe(`${many[5]} ${REDACTED}`);
      expect(new Set(added())).toEqual(new Set(['one-more-value', 'authored-value-1'].flatMap(formsOf)));
      expect(deleted()).toEqual([]);
    } finally {
      add.mockRestore();
      del.mockRestore();
    }
  });
});
