/**
 * The scan of GET /integrations for ids and statuses (the poller's lists, issue #26): the same items as
 * JSON.parse + toStatus, for any list a service may send; undefined (the caller parses in full) for anything else.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toStatus } from '../../src/api/normalize.js';
import { scanStatuses } from '../../src/api/status-list.js';

const full = (text: string): unknown[] => (JSON.parse(text) as unknown[]).map(toStatus);

const tricky = fc.oneof(fc.string(), fc.constantFrom('"', '\\', '\\"', '{"status":"x"}', ']', '}', ',', '\u2028', 'status', 'id'));
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(tricky, fc.constantFrom('id', 'status')), tie('v'), { maxKeys: 3 }),
  ),
})).v;
const item = fc.record(
  {
    id: fc.oneof(fc.nat(), fc.string(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true })),
    status: fc.oneof(fc.constantFrom('creating', 'enabled', 'deleteError'), tricky, fc.integer()),
    config: value,
    validationResults: fc.record({ status: tricky, validationTests: fc.array(fc.record({ status: tricky }), { maxLength: 2 }) }),
    extra: value,
  },
  { requiredKeys: [] },
);

describe('scanStatuses', () => {
  it('reads the same ids and statuses as a full parse, compact or indented, whatever else the items hold', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), fc.constantFrom(undefined, 2, '\t'), (items, indent) => {
        const text = JSON.stringify(items, null, indent);
        expect(scanStatuses(text)).toEqual(full(text));
      }),
      { numRuns: 500 },
    );
  });

  it('duplicate keys: the last one wins, as in JSON.parse; escaped key names are decoded', () => {
    const text = '[{"id":1,"status":"creating","status":"enabled"},{"\\u0069d":"7","st\\u0061tus":"editing"}]';
    expect(scanStatuses(text)).toEqual(full(text));
    expect(scanStatuses(text)).toEqual([{ id: '1', status: 'enabled' }, { id: '7', status: 'editing' }]);
  });

  it('leaves what it cannot read to the full parse', () => {
    for (const text of ['', '{}', '[1,2]', '[{"id":1}', '[{"id":1}] x', '[{"id":tru}]', '[{"id" 1}]', '["a"]', 'null']) {
      expect(scanStatuses(text)).toBeUndefined();
    }
    expect(scanStatuses(' [ ] ')).toEqual([]);
  });
});
