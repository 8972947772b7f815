/** parseWireJson: JSON.parse, but an id past 2^53 keeps its digits (src/api/wire-json.ts). */
import { describe, expect, it } from 'vitest';
import { parseWireJson } from '../../src/api/wire-json.js';

const big = '9007199254740993';

describe('parseWireJson', () => {
  it('reads ids past 2^53 as their digits, under `id` and names ending in `Id`, at any depth', () => {
    expect(parseWireJson(`{"id":${big},"webhooksId" : -${big},"request":{"webhookId":\n${big}},"list":[{"id":${big}}]}`)).toEqual({
      id: big,
      webhooksId: `-${big}`,
      request: { webhookId: big },
      list: [{ id: big }],
    });
  });

  it('leaves everything else to JSON.parse: safe ids, other keys, strings, decimals', () => {
    const text = `{"id":9007199254740991,"port":${big},"url":"x\\"id\\":${big}","idle":${big},"modelId":1.5e300,"xId":${big}.5}`;
    expect(parseWireJson(text)).toEqual(JSON.parse(text));
    expect(parseWireJson('')).toBeUndefined();
    expect(() => parseWireJson(`{"id":${big}`)).toThrow(SyntaxError);
  });
});
