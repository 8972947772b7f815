/**
 * How `sendDryRun` reads the service's answers: a failed validation test is "failed", a refusal of the change "rejected"
 * (exit 1), and a service that cannot run it now (busy, rate limited, timed out, down) "not run" (a warning), as the
 * failure catalogue classes them (src/errors.ts), not as a status range.
 */
import { describe, expect, it } from 'vitest';
import type { ServiceApi } from '../../src/api/client-types.js';
import { ApiError } from '../../src/errors.js';
import { sendDryRun } from '../../src/preview/dry-run.js';

const body = { type: 'lakehouse', autoBootstrap: false, config: { workspaceUrl: 'https://lake.example.com' } } as never;

function failingWith(status: number, method: string): ServiceApi {
  const fail = (): never => {
    throw new ApiError(status, 'Some reason', `answered ${status}`, method, '/integrations?dryRun=true', { statusCode: status });
  };
  return { createIntegration: fail, updateIntegration: fail, deleteIntegration: fail } as unknown as ServiceApi;
}

const send = (status: number) => sendDryRun(failingWith(status, 'POST'), { method: 'POST', path: '/integrations?dryRun=true', body }, (s) => s);

describe('sendDryRun: what an error answer makes of the dry run', () => {
  it('429 (rate limited, still after the client retries) and 408 (timed out) are "not run", not "rejected": the change was never judged', async () => {
    expect((await send(429)).status).toBe('error');
    expect((await send(408)).status).toBe('error');
  });

  it('409, 5xx: not run; 422: failed; other 4xx: rejected', async () => {
    expect((await send(409)).status).toBe('error');
    expect((await send(503)).status).toBe('error');
    expect((await send(500)).status).toBe('error');
    expect((await send(422)).status).toBe('failed');
    expect((await send(400)).status).toBe('rejected');
    expect((await send(404)).status).toBe('rejected');
    expect((await send(403)).status).toBe('rejected');
  });
});
