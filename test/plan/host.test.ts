import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostOf, naturalKey } from '../../src/service/kinds.js';

/** What hostOf must give: the URL parser's host, or the value lowercased when it parses as none. */
function byUrl(value: string): string {
  try {
    return new URL(value.includes('://') ? value : `https://${value}`).hostname.toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

describe('hostOf (natural keys, workspace URLs compared by host)', () => {
  it('gives what the URL parser gives for plain hosts, URLs and the forms it rewrites', () => {
    const cases = [
      'wh-1.example.com',
      'WH-1.Example.COM',
      'https://lake-3.example.com',
      'https://lake-3.example.com/sql/1.0/x',
      'HTTP://A.B/c',
      '1.2.3.4',
      '127.1',
      'a.0x1f',
      'host.09',
      'xn--nxasmq6b.com',
      'xn--zz.com',
      'a..b',
      '-a-.com',
      'a.b.',
      'http://a/b?c',
      'user@host.com',
      'host:8443',
      'bücher.example',
      'exa mple.com',
      '',
    ];
    for (const c of cases) expect(hostOf(c), c).toBe(byUrl(c));
    expect(hostOf(undefined)).toBe('');
  });

  it('agrees with the URL parser on arbitrary strings made of host-like pieces', () => {
    const piece = fc.constantFrom('a', 'Z', '0', '9', '-', '.', '/', 'x', 'xn--', '0x', 'ff', 'https://', 'http://', '_', '~', ':', '@', '%41', '?', '#', '\\', ' ', 'ü', '256');
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 10 }), (parts) => {
        const s = parts.join('');
        expect(hostOf(s)).toBe(byUrl(s));
      }),
      { numRuns: 3000 },
    );
  });

  it('keys two spellings of one host alike', () => {
    expect(naturalKey('lakehouse', { workspaceUrl: 'https://Lake.example.com/' })).toBe(naturalKey('lakehouse', { workspaceUrl: 'lake.example.com' }));
    expect(naturalKey('sql_analytics', { host: '127.1' })).toBe('sql_analytics:host=127.0.0.1');
  });
});
