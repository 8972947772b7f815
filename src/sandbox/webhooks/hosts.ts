/**
 * Delivery policy of the sandbox's webhooks: which receiver hosts a delivery may contact. The default
 * is loopback only (127.0.0.0/8, ::1, `localhost`). A verdict is taken from the URL's host alone,
 * before any DNS lookup or connection: a name that no name rule allows is never resolved, and
 * `localhost` is resolved to 127.0.0.1 / ::1 without asking any resolver. Pure, except for the
 * lookup functions handed to the HTTP client.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Entries of the default policy (also what the keyword `loopback` expands to). */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.0/8', '::1', 'localhost'];
/** `response.body.code` of a delivery the policy refused (statusCode 500, connect false). */
export const BLOCKED_CODE = 'EBLOCKED';

/** `'*'`, a comma list, or a list of entries: host names, `.suffix`/`*.suffix`, IP addresses, CIDRs, `loopback`, `none`. */
export type DeliveryHostsInput = string | readonly string[];

export interface DeliveryPolicy {
  readonly allowAll: boolean;
  /** Normalised entries, for display (`['*']` when everything is allowed). */
  readonly entries: readonly string[];
  readonly names: ReadonlySet<string>;
  /** Each with its leading dot: `.internal.example.com` matches `a.internal.example.com`. */
  readonly suffixes: readonly string[];
  readonly addresses: BlockList;
}

export type HostVerdict =
  | { allowed: true; host: string; via: 'ip' | 'localhost' | 'name' }
  | { allowed: false; host: string };

const LABEL = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
const NAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);

/** Host as compared: lower case, no IPv6 brackets, no trailing dot. */
export function normaliseHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.endsWith('.') && isIP(h.slice(0, -1)) === 0) h = h.slice(0, -1);
  return h;
}

function addCidr(list: BlockList, entry: string): string {
  const slash = entry.lastIndexOf('/');
  const addr = normaliseHost(entry.slice(0, slash));
  const bitsText = entry.slice(slash + 1);
  const family = isIP(addr);
  const max = family === 6 ? 128 : 32;
  const bits = Number(bitsText);
  if (family === 0 || !/^\d{1,3}$/.test(bitsText) || bits > max) {
    throw new Error(`"${entry}" is not a CIDR range (like 10.0.0.0/8 or fd00::/8)`);
  }
  list.addSubnet(addr, bits, family === 6 ? 'ipv6' : 'ipv4');
  return `${addr}/${bits}`;
}

/**
 * Parse a policy. `undefined` = the default (loopback only). Throws an Error naming the bad entry.
 * A list replaces the default; add `loopback` to keep it. `none` alone blocks every delivery.
 */
export function parseDeliveryHosts(input?: DeliveryHostsInput): DeliveryPolicy {
  const raw = input === undefined ? [...LOOPBACK_HOSTS] : typeof input === 'string' ? input.split(',') : [...input];
  const items = raw.map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new Error(`empty host list; give host names, .suffixes, CIDRs, "loopback", "none" or "*"`);
  const addresses = new BlockList();
  const names = new Set<string>();
  const suffixes: string[] = [];
  const entries: string[] = [];
  let allowAll = false;
  const add = (item: string): void => {
    const entry = item.toLowerCase();
    if (entry === '*') allowAll = true;
    else if (entry === 'none') return;
    else if (entry === 'loopback') LOOPBACK_HOSTS.forEach(add);
    else if (entry.includes('://')) throw new Error(`"${item}" is a URL; give the host only (like hooks.example.com)`);
    else if (entry.includes('/')) entries.push(addCidr(addresses, entry));
    else if (isIP(normaliseHost(entry)) !== 0) {
      const addr = normaliseHost(entry);
      addresses.addAddress(addr, isIP(addr) === 6 ? 'ipv6' : 'ipv4');
      entries.push(addr);
    } else {
      const suffix = entry.startsWith('*.') ? entry.slice(1) : entry.startsWith('.') ? entry : undefined;
      const name = normaliseHost(suffix === undefined ? entry : suffix.slice(1));
      if (!NAME.test(name)) {
        const hint = entry.includes(':') ? ' (ports are not part of the policy; give the host only)' : '';
        throw new Error(`"${item}" is not a host name, .suffix, IP address or CIDR${hint}`);
      }
      if (suffix === undefined) names.add(name);
      else suffixes.push(`.${name}`);
      entries.push(suffix === undefined ? name : `.${name}`);
    }
  };
  items.forEach(add);
  return { allowAll, entries: allowAll ? ['*'] : [...new Set(entries)], names, suffixes, addresses };
}

/** Whether a delivery to `hostname` (a URL's host) may go out. Never resolves anything. */
export function checkHost(policy: DeliveryPolicy, hostname: string): HostVerdict {
  const host = normaliseHost(hostname);
  const family = isIP(host);
  if (family !== 0) {
    const ok = policy.allowAll || policy.addresses.check(host, family === 6 ? 'ipv6' : 'ipv4');
    return ok ? { allowed: true, host, via: 'ip' } : { allowed: false, host };
  }
  const named = policy.allowAll || policy.names.has(host) || policy.suffixes.some((s) => host.endsWith(s));
  if (!named) return { allowed: false, host };
  return { allowed: true, host, via: host === 'localhost' ? 'localhost' : 'name' };
}

/** Human-readable summary, e.g. for the CLI banner. */
export function describePolicy(policy: DeliveryPolicy): string {
  if (policy.allowAll) return 'any host (*)';
  return policy.entries.length === 0 ? 'none (every delivery is blocked)' : policy.entries.join(', ');
}

function familyOf(options: LookupOptions): 0 | 4 | 6 {
  const f = options.family as unknown;
  if (f === 4 || f === 'IPv4') return 4;
  if (f === 6 || f === 'IPv6') return 6;
  return 0;
}

/** Resolves every name to loopback (127.0.0.1, then ::1) without any resolver: used for `localhost`. */
export const loopbackLookup = ((
  _hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void => {
  const family = familyOf(options);
  const all: LookupAddress[] = [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ].filter((a) => family === 0 || a.family === family);
  process.nextTick(() => (options.all ? callback(null, all) : callback(null, all[0]!.address, all[0]!.family)));
}) as LookupFunction;

/**
 * The lookup for an allowed delivery: none for IP literals, `loopbackLookup` for `localhost`, else
 * `lookup` (default: the system resolver).
 */
export function lookupFor(verdict: HostVerdict, lookup?: LookupFunction): LookupFunction | undefined {
  if (!verdict.allowed || verdict.via === 'ip') return undefined;
  return verdict.via === 'localhost' ? loopbackLookup : lookup;
}
