/**
 * Failures as values: every failure a reconcile meets carries a stable code and a transient/terminal
 * class from where it was raised, and the daemon's verdict, retry and readiness follow from those (never
 * from message text). Each case runs the real engine against a scripted service on 127.0.0.1.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { objectStore } from '../../bench/flaky-drill.mjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient } from '../../src/api/client.js';
import { judgeResult, judgeThrown } from '../../src/daemon/classify.js';
import { ApiError, CancelledError, ErrorCode, TransportError, UserError, apiStatusCode, classify, failure, failureKind } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { reconcile } from '../../src/reconcile/engine.js';
import { engineOptions } from '../helpers/engine-options.js';
import type { ReconcileResult } from '../../src/reconcile/types.js';
import { sendJson, startServer, type Handler, type TestServer } from '../api/server.js';

const MANIFEST = objectStore('store');

let server: TestServer | undefined;
let client: ServiceClient | undefined;
let dir: string | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  server = client = dir = undefined;
});

/** Lists answer empty unless the handler says otherwise. */
async function service(handler: Handler, clientOptions: { timeoutMs?: number; retries?: number } = {}): Promise<ServiceClient> {
  server = await startServer(async (req, res, ctx) => {
    const handled = await handler(req, res, ctx);
    if (handled !== undefined || res.headersSent || res.writableEnded) return;
    if (req.method === 'GET' && (req.url === '/integrations' || req.url === '/webhooks')) return sendJson(res, 200, []);
  });
  client = new ServiceClient({ baseUrl: server.url, token: 't', retries: clientOptions.retries ?? 0, timeoutMs: clientOptions.timeoutMs ?? 2000, logger: silentLogger() });
  return client;
}

async function run(api: ServiceClient, manifest = MANIFEST, state?: string, signals: { signal?: AbortSignal; forceSignal?: AbortSignal } = {}): Promise<ReconcileResult> {
  dir = await mkdtemp(join(tmpdir(), 'govops-classify-'));
  await mkdir(join(dir, 'm'));
  await writeFile(join(dir, 'm', 'a.yaml'), manifest);
  if (state !== undefined) await writeFile(join(dir, 'state.json'), state);
  return reconcile(api, engineOptions({
    root: dir,
    paths: ['m'],
    apply: true,
    prune: false,
    allowReplace: false,
    logger: silentLogger(),
    statePath: join(dir, 'state.json'),
    env: {},
    timeoutMs: 5000,
    pollIntervalMs: 10,
    pollMaxIntervalMs: 20,
    ...signals,
  }));
}

describe('error codes and classes where errors are raised', () => {
  it('HTTP statuses: 409, 429 and 5xx are transient; 400, 401/403, 404 and 422 terminal', () => {
    expect(failure(apiStatusCode(409))).toEqual({ code: ErrorCode.apiConflict, failureClass: 'transient' });
    expect(failure(apiStatusCode(422))).toEqual({ code: ErrorCode.apiValidation, failureClass: 'terminal' });
    expect(failure(apiStatusCode(503))).toEqual({ code: ErrorCode.apiUnavailable, failureClass: 'transient' });
    expect(failure(apiStatusCode(500))).toEqual({ code: ErrorCode.apiUnavailable, failureClass: 'transient' });
    expect(failure(apiStatusCode(429))).toEqual({ code: ErrorCode.apiRateLimited, failureClass: 'transient' });
    expect(failure(apiStatusCode(401)).failureClass).toBe('terminal');
    expect(failure(apiStatusCode(400)).failureClass).toBe('terminal');
    // who retries: the client owns 5xx, 408 and 429 (and a 409 on a read), the task a 409 on a write
    expect(failureKind(apiStatusCode(503)).retriedBy).toBe('client');
    expect(failureKind(apiStatusCode(429)).retriedBy).toBe('client');
    expect(failureKind(apiStatusCode(409, 'GET')).retriedBy).toBe('client');
    expect(failureKind(apiStatusCode(409, 'PUT')).retriedBy).toBe('task');
    expect(failureKind(apiStatusCode(422)).retriedBy).toBe('nobody');
    // the message never matters
    const e = new ApiError(422, 'Unprocessable Entity', 'the host is unreachable; ECONNREFUSED', 'POST', '/integrations');
    expect(classify(e)).toEqual({ code: ErrorCode.apiValidation, failureClass: 'terminal' });
  });

  it('file-system errors are I/O (transient), a user error is terminal unless raised otherwise, anything else is internal', () => {
    expect(classify(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toEqual({ code: ErrorCode.io, failureClass: 'transient' });
    expect(classify(new UserError('bad flag'))).toEqual({ code: ErrorCode.userError, failureClass: 'terminal' });
    expect(classify(new TypeError('bug'))).toEqual({ code: ErrorCode.internal, failureClass: 'terminal' });
  });
});

describe('classification of a reconcile, and what the daemon does with it', () => {
  it('request timeout during apply: GOVOPS_REQUEST_TIMEOUT, transient → unreachable, not ready, retried with backoff', async () => {
    // The POST is never answered; the lists the plan reads are, well within the timeout even on a loaded machine.
    const api = await service(() => undefined, { timeoutMs: 1500 });
    const result = await run(api);
    expect(result.stage).toBe('apply');
    expect(result.outcomes[0]).toMatchObject({ result: 'failed', code: ErrorCode.requestTimeout, failureClass: 'transient' });
    expect(result.failure).toEqual({ code: ErrorCode.requestTimeout, failureClass: 'transient' });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'unreachable', retry: 'backoff', blocksReadiness: true });
  });

  it('cancelled during the live listing (leadership lost, govops stopping): GOVOPS_CANCELLED, readiness unchanged, retried', async () => {
    // The listing is never answered; the run's signals end it (a standby's plan follows, or the process exits).
    let asked!: () => void;
    const listing = new Promise<void>((r) => (asked = r));
    const api = await service((req) => {
      if (req.method === 'GET') asked();
      return new Promise<void>(() => undefined);
    }, { timeoutMs: 30_000 });
    const stop = new AbortController();
    const pending = run(api, MANIFEST, undefined, { signal: stop.signal, forceSignal: stop.signal });
    await listing;
    stop.abort(new Error('leadership lost'));
    const result = await pending;
    expect(result.failure?.code).toBe(ErrorCode.cancelled);
    // A cancellation failed nothing: a ready replica that lost its lease mid-listing stays ready (it was 503 until its
    // next plan as a standby, out of its Service meanwhile).
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'failed', retry: 'backoff', blocksReadiness: false });
    expect(judgeThrown(new CancelledError('stopped')).blocksReadiness).toBe(false);
  });

  it('connection refused: GOVOPS_CONNECT_FAILED → unreachable', async () => {
    const closed = await startServer(() => undefined);
    const url = closed.url;
    await closed.close();
    client = new ServiceClient({ baseUrl: url, token: 't', retries: 0, logger: silentLogger() });
    const result = await run(client);
    expect(result).toMatchObject({ stage: 'plan', failure: { code: ErrorCode.connectFailed, failureClass: 'transient' } });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'unreachable', blocksReadiness: true });
    expect(failureKind(result.failure!.code).unreachable).toBe(true);
  });

  it('409 on a read is retried like a 503; 409 on a create that persists is GOVOPS_CONFLICT_PERSISTS (transient)', async () => {
    let lists = 0;
    const api = await service((req, res) => {
      if (req.method === 'GET' && req.url === '/integrations' && ++lists === 1) return sendJson(res, 409, { statusCode: 409, error: 'Conflict', message: 'busy' });
      if (req.method === 'POST') return sendJson(res, 409, { statusCode: 409, error: 'Conflict', message: 'busy' });
    }, { retries: 1 });
    const result = await run(api);
    expect(lists).toBeGreaterThanOrEqual(2);
    expect(result.stage).toBe('apply');
    expect(result.outcomes[0]).toMatchObject({ code: ErrorCode.conflictPersists, failureClass: 'transient' });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'failed', retry: 'backoff', blocksReadiness: false });
  });

  it('422 whose message says "unreachable": a validation failure (terminal), not an unreachable service; ready stays', async () => {
    const api = await service((req, res) => {
      if (req.method === 'POST') return sendJson(res, 422, { statusCode: 422, error: 'Unprocessable Entity', message: 'storage endpoint unreachable (ECONNREFUSED)' });
    });
    const result = await run(api);
    expect(result.outcomes[0]).toMatchObject({ code: ErrorCode.validationFailed, failureClass: 'terminal' });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'failed', retry: 'slow', blocksReadiness: false });
  });

  it('5xx when observing: GOVOPS_API_UNAVAILABLE → unreachable', async () => {
    const api = await service((req, res) => {
      if (req.method === 'GET') return sendJson(res, 502, { statusCode: 502, error: 'Bad Gateway', message: 'upstream' });
    });
    const result = await run(api);
    expect(result.failure).toEqual({ code: ErrorCode.apiUnavailable, failureClass: 'transient' });
    expect(judgeResult(result, true).verdict).toBe('unreachable');
  });

  it('corrupt state file: GOVOPS_STATE_CORRUPT, terminal → not retried in a loop (only at the resync period), not ready', async () => {
    const api = await service(() => undefined);
    const result = await run(api, MANIFEST, '{ not json');
    expect(result.failure).toEqual({ code: ErrorCode.stateCorrupt, failureClass: 'terminal' });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'failed', retry: 'slow', blocksReadiness: true });
  });

  it('invalid revision: GOVOPS_INVALID_REVISION → rejected, no retry, readiness untouched', async () => {
    const api = await service(() => undefined);
    const result = await run(api, MANIFEST.replace('type: object_store', 'type: no_such_kind'));
    expect(result).toMatchObject({ stage: 'load', failure: { code: ErrorCode.invalidRevision, failureClass: 'terminal' } });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'invalid', retry: 'none', blocksReadiness: false });
  });

  it('a revision folder that vanished: GOVOPS_SOURCE_IO, transient → retried, not rejected', async () => {
    const api = await service(() => undefined);
    const result = await reconcile(api, engineOptions({
      root: join(tmpdir(), 'govops-no-such-revision-folder'),
      paths: ['.'],
      apply: true,
      prune: false,
      allowReplace: false,
      logger: silentLogger(),
      statePath: join(tmpdir(), 'govops-unused-state.json'),
      env: {},
    }));
    expect(result).toMatchObject({ stage: 'load', failure: { code: ErrorCode.sourceIo, failureClass: 'transient' } });
    expect(judgeResult(result, true)).toMatchObject({ verdict: 'failed', retry: 'backoff', blocksReadiness: false });
  });

  it('the state locked by another writer: GOVOPS_STATE_LOCKED, transient', () => {
    expect(classify(new UserError('locked', undefined, { code: ErrorCode.stateLocked }))).toEqual({
      code: ErrorCode.stateLocked,
      failureClass: 'transient',
    });
    expect(new TransportError('x', 'GET', '/').failureClass).toBe('transient');
  });
});
