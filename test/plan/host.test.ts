import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hostOf, keyedWebhookIdentity, recordedWebhookIdentity, urlAsCompared, urlWithLowerHost, webhookIdentity } from '../../src/service/kinds.js';
import { integrationIdentity, naturalKey } from '../../src/kinds/registry.js';

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

describe('urlWithLowerHost, integrationIdentity, webhookIdentity (issue 22)', () => {
  it('lower-cases the scheme and host of a URL, not its path, query or userinfo', () => {
    expect(urlWithLowerHost('HTTPS://Hooks.Example.COM/In?Q=A#F')).toBe('https://hooks.example.com/In?Q=A#F');
    expect(urlWithLowerHost('https://User:Pw@Host.Example:8443/P')).toBe('https://User:Pw@host.example:8443/P');
    expect(urlWithLowerHost('SQLPool.Example.net')).toBe('sqlpool.example.net');
    expect(urlWithLowerHost('')).toBe('');
  });

  it('identities: type and the natural key without editable parts; a webhook by name and URL', () => {
    expect(integrationIdentity('sql_analytics', { host: 'DB.Example.com' })).toBe('sql_analytics:host=db.example.com');
    expect(integrationIdentity('dataset_warehouse', { dataset: 'gov', role: 'a@x' })).toBe(integrationIdentity('dataset_warehouse', { dataset: 'gov', role: 'b@x' }));
    expect(integrationIdentity('dataset_warehouse', {})).toBe('dataset_warehouse:dataset=service');
    expect(webhookIdentity('h', 'https://A.example/x')).toBe(webhookIdentity('h', 'https://a.example/x'));
    expect(webhookIdentity('h', 'https://a.example/x')).not.toBe(webhookIdentity('h', 'https://a.example/X'));
    expect(webhookIdentity('h', 'https://a.example/x')).not.toBe(webhookIdentity('H', 'https://a.example/x'));
  });

  it('urlAsCompared: an http(s) URL as new URL(u).href writes it (empty path "/", no default port, punycode host); a slash after a path stays a difference', () => {
    expect(urlAsCompared('https://A.example')).toBe('https://a.example/');
    expect(urlAsCompared('https://a.example?q=1')).toBe('https://a.example/?q=1');
    expect(urlAsCompared('https://a.example:443/x')).toBe('https://a.example/x');
    expect(urlAsCompared('http://a.example:80')).toBe('http://a.example/');
    expect(urlAsCompared('https://a.example:8443')).toBe('https://a.example:8443/');
    expect(urlAsCompared('http://a.example:443/x')).toBe('http://a.example:443/x');
    expect(urlAsCompared('https://a.example/x')).not.toBe(urlAsCompared('https://a.example/x/'));
    expect(urlAsCompared('idp.example.com')).toBe('idp.example.com');
    expect(urlAsCompared('https://Bücher.Example/In')).toBe('https://xn--bcher-kva.example/In');
    expect(urlAsCompared('https://User:Pw@H.example:443')).toBe('https://User:Pw@h.example/');
    expect(webhookIdentity('h', 'https://a.example')).toBe(webhookIdentity('h', 'https://A.example:443/'));
  });

  it('a webhook identity recorded before urlAsCompared (URL only lower-cased) names the same webhook', () => {
    const old = JSON.stringify(['h', urlWithLowerHost('https://A.example')]);
    const key = 'ab'.repeat(32);
    expect(recordedWebhookIdentity(old, key)).toBe(keyedWebhookIdentity('h', 'https://a.example/', key));
    expect(recordedWebhookIdentity(webhookIdentity('h', 'https://a.example/'), key)).toBe(keyedWebhookIdentity('h', 'https://a.example/', key));
    expect(recordedWebhookIdentity('not json', key)).toBe('not json');
  });
});
