/**
 * Cutting text from outside: redacted first, so a secret across the cut leaves no part of itself; the cut never
 * splits the `[redacted]` standing for a value, nor a surrogate pair.
 */
import { describe, expect, it } from 'vitest';
import { cutPoint, cutRedacted, lastChars, redactThenCut } from '../../src/util/cut.js';
import { REDACTED, registerSecrets } from '../../src/util/redact.js';

const SECRET = 'cut-test-Secret-9f3a/ü&"';

describe('redactThenCut', () => {
  registerSecrets(SECRET);

  it('a secret across the cut: no part of it is kept, at any cut', () => {
    const text = `${'x'.repeat(20)}${SECRET}${'y'.repeat(20)}`;
    for (let max = 0; max <= text.length; max++) {
      const out = redactThenCut(text, max);
      expect(out).not.toContain('cut-test');
      expect(out.replace(/…$/, '').length).toBeLessThanOrEqual(max);
    }
  });

  it('in every form the redactor knows (JSON-escaped here), and says how much was left out', () => {
    const echo = `invalid: ${JSON.stringify({ password: SECRET })} and more`;
    expect(redactThenCut(echo, 25, (n) => `… (${n} more characters)`)).toBe(`invalid: {"password":"… (${REDACTED.length + 11} more characters)`);
    expect(redactThenCut(echo, 200)).toBe(`invalid: {"password":"${REDACTED}"} and more`);
  });
});

describe('cutPoint / cutRedacted / lastChars', () => {
  it('never splits a [redacted]: the cut moves before it (after it, for a tail)', () => {
    const text = `ab${REDACTED}cd${REDACTED}${REDACTED}ef`;
    for (let max = 0; max <= text.length + 1; max++) {
      const head = text.slice(0, cutPoint(text, max));
      expect(head.length).toBeLessThanOrEqual(max);
      expect(head.replaceAll(REDACTED, '')).not.toMatch(/[[\]]/);
      const tail = lastChars(text, max);
      expect(tail.length).toBeLessThanOrEqual(max);
      expect(text.endsWith(tail)).toBe(true);
      expect(tail.replaceAll(REDACTED, '')).not.toMatch(/[[\]]/);
    }
    expect(cutRedacted(`ab${REDACTED}`, 6)).toBe('ab…');
  });

  it('never splits a surrogate pair', () => {
    const text = 'a😀b';
    expect(cutRedacted(text, 2, () => '')).toBe('a');
    expect(lastChars(text, 2)).toBe('b');
    expect(cutRedacted(text, 3, () => '')).toBe('a😀');
  });

  it('text within the bound is kept as it is', () => {
    expect(cutRedacted('abc', 3)).toBe('abc');
    expect(lastChars('abc', 3)).toBe('abc');
  });
});
