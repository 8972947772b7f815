/**
 * Setup of every file in a shared worker (vitest.config.ts): after the file, the process-wide redactor must leave
 * ordinary words alone. A file that registered one as a secret (a test credential `secret`, a Basic password `token`)
 * would have every later file in the worker see that word redacted in its output; the error names the file that did.
 */
import { afterAll, beforeAll } from 'vitest';
import { redactText } from '../../src/util/redact.js';

const WORDS = 'a secret password token of the admin user with secrets';

let cleanBefore = true;
beforeAll(() => {
  cleanBefore = redactText(WORDS) === WORDS; // an earlier file's failure is reported once, by that file
});

afterAll(() => {
  const seen = redactText(WORDS);
  if (cleanBefore && seen !== WORDS) {
    throw new Error(
      `this file left ordinary words registered in the process-wide redactor ("${seen}"): every later file in this shared ` +
        'worker would see them redacted. Give the test a distinctive secret, or list the file in vitest.config.ts ISOLATED.',
    );
  }
});
