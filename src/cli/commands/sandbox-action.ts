/** What `govops sandbox` does (loaded only when it runs; declared in sandbox.ts). */
import type { Command } from 'commander';
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UserError } from '../../errors.js';
import { parseTimerDuration } from '../../util/duration.js';
import { contextFrom } from '../context.js';
import { parseFaultInput, parseStuck, type FaultInput } from '../../sandbox/faults.js';
import { describePolicy, parseBehaviours, parseDeliveryHosts, startSandbox, type SandboxOptions } from '../../sandbox/index.js';
import type { SandboxFlags } from './sandbox.js';

function duration(flag: string, value: string): number {
  try {
    return parseTimerDuration(value);
  } catch (err) {
    throw new UserError(`--${flag}: ${(err as Error).message}`);
  }
}

function number(flag: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UserError(`--${flag} must be a number from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

/**
 * Fault rules from the flags (applied to `--fault-path`, default every endpoint). `errorStatusGiven`: whether
 * `--error-status` was given (it has a default): like `--retry-after`, it shapes the errors `--error-rate` injects, and
 * without that flag it was ignored, so a rehearsal ran without the faults it was started for.
 */
export function faultsFromFlags(f: SandboxFlags, errorStatusGiven = false): FaultInput[] {
  const path = f.faultPath;
  const rules: FaultInput[] = [];
  if (f.latency) rules.push({ type: 'latency', path, latencyMs: duration('latency', f.latency) });
  if (!f.errorRate && (errorStatusGiven || f.retryAfter !== undefined)) {
    const given = [errorStatusGiven ? '--error-status' : '', f.retryAfter !== undefined ? '--retry-after' : ''].filter(Boolean).join(' and ');
    throw new UserError(`${given} shape${given.includes(' and ') ? '' : 's'} the errors --error-rate injects, and --error-rate is not given: no error would be injected`, 'add --error-rate (1 for every request, 0.1 for one in ten)');
  }
  if (f.errorRate) {
    const rule: FaultInput = { type: 'error', path, rate: number('error-rate', f.errorRate, 0, 1), status: number('error-status', f.errorStatus, 400, 599) };
    if (f.retryAfter !== undefined) {
      rule.retryAfter = number('retry-after', f.retryAfter, 0, 86_400);
      if (!Number.isInteger(rule.retryAfter)) throw new UserError(`--retry-after must be a whole number of seconds, got "${f.retryAfter}"`);
    }
    rules.push(rule);
  }
  if (f.dropRate) rules.push({ type: 'drop', path, rate: number('drop-rate', f.dropRate, 0, 1) });
  if (f.conflictRate) rules.push({ type: 'conflict', path, rate: number('conflict-rate', f.conflictRate, 0, 1) });
  if (f.faults) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(f.faults, 'utf8'));
    } catch (err) {
      throw new UserError(`--faults ${f.faults}: ${(err as Error).message}`, 'give a JSON file holding an array of fault rules');
    }
    if (!Array.isArray(raw)) throw new UserError(`--faults ${f.faults}: expected a JSON array of fault rules`);
    raw.forEach((r, i) => {
      try {
        rules.push(parseFaultInput(r));
      } catch (err) {
        throw new UserError(`--faults ${f.faults}: rule ${i}: ${(err as Error).message}`);
      }
    });
  }
  return rules;
}

/** `--deliver-to`: validated here so a bad entry is a usage error naming the flag. */
function deliverTo(value: string): string[] {
  try {
    parseDeliveryHosts(value);
  } catch (err) {
    throw new UserError(`--deliver-to: ${(err as Error).message}`, `e.g. --deliver-to loopback,.internal.example.com,10.0.0.0/8 or --deliver-to '*'`);
  }
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

function stuckFromFlag(value: boolean | string | undefined): boolean | string[] {
  if (value === undefined || value === false) return false;
  if (value === true) return true;
  try {
    return parseStuck(value.split(',').map((s) => s.trim()).filter(Boolean));
  } catch (err) {
    throw new UserError(`--stuck-transitions: ${(err as Error).message}`);
  }
}

function behavioursFromFlag(value: string | undefined): string[] {
  if (value === undefined) return [];
  try {
    return [...parseBehaviours(value)];
  } catch (err) {
    throw new UserError(`--behaviour: ${(err as Error).message}`);
  }
}

/** Loopback addresses and names: the only hosts where the sandbox is private to this machine. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h.endsWith('.localhost');
}

/** `--data FILE` must be in an existing folder: fail at start, not at every save. */
function checkDataFile(file: string): void {
  const dir = dirname(resolve(file));
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new UserError(`--data ${file}: the folder ${dir} does not exist`, `create it first (mkdir -p ${dir}), or give a file in an existing folder`);
}

export async function sandboxAction(flags: SandboxFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command, 2);
  if (flags.data) checkDataFile(flags.data);
  const options: SandboxOptions = {
    port: number('port', flags.port, 0, 65535),
    host: flags.host,
    transitionMs: duration('transition', flags.transition),
    deliveryTimeoutMs: duration('delivery-timeout', flags.deliveryTimeout),
    dev: flags.dev === true,
    logger: ctx.logger,
    faults: faultsFromFlags(flags, command.getOptionValueSource('errorStatus') === 'cli'),
    stuckTransitions: stuckFromFlag(flags.stuckTransitions),
    deliveryHosts: deliverTo(flags.deliverTo),
    behaviours: behavioursFromFlag(flags.behaviour),
  };
  if (flags.adminToken) options.adminToken = flags.adminToken;
  if (flags.userToken) options.userToken = flags.userToken;
  if (flags.tokensFile) options.tokensFile = flags.tokensFile;
  if (flags.data) options.dataFile = flags.data;
  let sandbox;
  try {
    sandbox = await startSandbox(options);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') throw new UserError(`port ${options.port} is in use`, 'pick another with --port, or --port 0 for a free one');
    throw new UserError(e.message);
  }
  const out = ctx.stdout;
  // The signal handlers before the first line: a SIGTERM sent on reading it must not meet the default action.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    ctx.logger.info({ signal }, 'sandbox stopping');
    sandbox
      .close()
      .then(() => {
        out.write('govops sandbox stopped\n');
        process.exit(0);
      })
      .catch((err: unknown) => {
        process.stderr.write(`error: ${(err as Error).message}\n`);
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  out.write(`govops sandbox listening on ${sandbox.url}\n`);
  // Tokens the user configured (an option, the tokens file) are not printed; dev and generated ones are.
  const show = (label: string, token: string, origin: string): void => {
    out.write(`${label}: ${origin === 'given' || origin === 'file' ? '(as configured)' : token}\n`);
  };
  show('admin token', sandbox.adminToken, sandbox.tokenOrigins.admin);
  show('user token', sandbox.userToken, sandbox.tokenOrigins.user);
  out.write('  integrations: "Authorization: <admin token>"; webhooks: "Authorization: Bearer <token>"\n');
  if (flags.dev) out.write('dev tokens: fixed and public, for local use only\n');
  out.write(`webhook deliveries allowed to: ${describePolicy(sandbox.webhooks.deliveryPolicy)} (others are recorded as EBLOCKED; see --deliver-to)\n`);
  out.write(
    `control API: ${sandbox.url}/_sandbox (${flags.dev ? 'no token needed with --dev' : 'needs the admin token'}; JSON bodies only, no cross-origin requests)\n`,
  );
  if (!isLoopbackHost(options.host ?? '127.0.0.1')) {
    ctx.stderr.write(
      `warning: --host ${options.host} is not a loopback address: other machines can reach this sandbox${flags.dev ? ' with the public dev tokens, and its control API without any token' : ''}; use it only on a trusted network\n`,
    );
  }
  if (flags.data) out.write(`state persisted to ${flags.data}\n`);
  const behaviours = sandbox.behaviours();
  if (behaviours.length) out.write(`server behaviours: ${behaviours.join(', ')}\n`);
}
