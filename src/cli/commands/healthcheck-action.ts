/** What `govops healthcheck` does (loaded only when it runs; declared in healthcheck.ts). */
import type { Command } from 'commander';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { UserError } from '../../errors.js';
import { parseAddress } from '../../util/address.js';
import { parseTimerDuration } from '../../util/duration.js';
import { parseCount } from '../flags.js';
import { findRunProcesses } from '../run-processes.js';
import type { HealthcheckFlags } from './healthcheck.js';

/** The scripts a `govops run` process was started with: the `govops` command (package.json bin) or main.js itself. */
const ENTRIES = [fileURLToPath(new URL('../govops.cjs', import.meta.url)), fileURLToPath(new URL('../main.js', import.meta.url))];

/** The URL of /healthz for a listen address: a wildcard host is reached on the loopback address. */
export function healthzUrl(listen: string): string {
  const { host, port } = parseAddress(listen);
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}/healthz`;
}

function probe(url: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((done) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      done(res.statusCode === 200 ? undefined : `answered ${res.statusCode}`);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs}ms`)));
    req.on('error', (err) => done(err.message));
    req.end();
  });
}

export async function healthcheckAction(flags: HealthcheckFlags, command: Command): Promise<void> {
  let timeoutMs: number;
  try {
    timeoutMs = parseTimerDuration(flags.timeout);
  } catch (err) {
    throw new UserError(`--timeout: ${(err as Error).message}`);
  }
  // 0 is no timeout to node:http: the check waited for ever on a daemon that accepts and never answers
  if (timeoutMs <= 0) throw new UserError('--timeout must be greater than zero', 'e.g. --timeout 3s');
  const pid = parseCount('--pid', flags.pid, 1);
  const targets: Array<{ listen: string; from: string }> = [];
  // --listen checks that address instead of looking for a daemon; --pid names the daemon to look for: not both
  if (pid !== undefined && command.getOptionValueSource('listen') === 'cli') {
    throw new UserError('--pid and --listen cannot be used together: --listen checks that address without looking for a daemon', 'give --pid N (its --listen is read from the process) or --listen ADDRESS');
  }
  if (command.getOptionValueSource('listen') === 'cli') {
    targets.push({ listen: flags.listen, from: '--listen' });
  } else {
    const daemons = await findRunProcesses({ entries: ENTRIES, selfPid: process.pid, fallbackEnv: process.env, pid });
    for (const d of daemons) targets.push({ listen: d.listen, from: `govops run (pid ${d.pid})` });
    if (pid !== undefined && daemons.length === 0) throw new UserError(`process ${pid} is not a running \`govops run\``);
    if (targets.length === 0) targets.push({ listen: flags.listen, from: 'no running govops run found; GOVOPS_LISTEN or the default' });
  }
  let healthy = true;
  for (const t of targets) {
    let url: string;
    try {
      url = healthzUrl(t.listen);
    } catch (err) {
      throw new UserError(`--listen: ${(err as Error).message}`);
    }
    const problem = await probe(url, timeoutMs);
    if (problem) healthy = false;
    process.stdout.write(`${problem ? 'unhealthy' : 'healthy'}: ${url} (${t.from})${problem ? `: ${problem}` : ''}\n`);
  }
  process.exitCode = healthy ? 0 : 1;
}
