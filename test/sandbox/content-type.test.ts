/**
 * Interface 4: "All bodies are JSON (a YAML payload is also accepted for integration requests). Requests carry
 * `accept` and `Content-Type` headers for JSON." A body sent without a JSON (or, on integration endpoints, YAML)
 * content type is not one the service reads: the sandbox answers 415 instead of parsing it anyway, so a client that
 * leaves the header out (or sends `text/plain`, fetch's default for a string) fails here as it would on the service.
 */
import { describe, expect, it } from 'vitest';
import { bearer, bodyFor, call, sandboxPerFile } from './harness.js';

const box = sandboxPerFile();

/** A request whose body carries exactly the content type given (none at all when undefined). */
async function send(method: string, path: string, body: string, contentType: string | undefined, token: string): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { accept: 'application/json', authorization: token };
  if (contentType !== undefined) headers['content-type'] = contentType;
  // A Uint8Array body: fetch adds no content type of its own (a string body would get text/plain).
  const res = await fetch(box.sb.url + path, { method, headers, body: new TextEncoder().encode(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const HOOK = { url: 'http://127.0.0.1:1/h', name: 'h', global: false, notificationType: ['modelAccessRequested'], actionType: 'triggered' };

describe('a body must come with a JSON content type (interface 4)', () => {
  const integration = JSON.stringify(bodyFor('sql_analytics'));
  const webhooks = JSON.stringify({ webhooks: [HOOK] });

  it.each([
    ['no content type', undefined],
    ['text/plain', 'text/plain;charset=UTF-8'],
    ['form', 'application/x-www-form-urlencoded'],
  ])('POST /integrations with %s: 415 with the error body, nothing created', async (_what, type) => {
    const r = await send('POST', '/integrations', integration, type, box.sb.adminToken);
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type', message: expect.stringContaining('Content-Type') });
    expect((await call(box.sb, 'GET', '/integrations')).body).toEqual([]);
  });

  it.each([
    ['no content type', undefined],
    ['text/plain', 'text/plain;charset=UTF-8'],
  ])('POST /webhooks with %s: 415, nothing created', async (_what, type) => {
    const r = await send('POST', '/webhooks', webhooks, type, bearer(box.sb.adminToken));
    expect(r.status).toBe(415);
    expect(r.body).toMatchObject({ statusCode: 415, error: 'Unsupported Media Type' });
    expect((await call(box.sb, 'GET', '/webhooks', { token: bearer(box.sb.adminToken) })).body).toEqual([]);
  });

  it.each([
    ['application/json', 'application/json'],
    ['application/json with a charset', 'application/json; charset=utf-8'],
    ['a +json type', 'application/vnd.service+json'],
    ['YAML (integrations only)', 'application/yaml'],
  ])('POST /integrations with %s is read', async (_what, type) => {
    const r = await send('POST', '/integrations', integration, type, box.sb.adminToken);
    expect(r.status).toBe(200);
  });

  it('a request without a body needs no content type (DELETE of a manual integration, a retry)', async () => {
    const made = await call(box.sb, 'POST', '/integrations', { body: bodyFor('object_store') });
    const headers = { accept: 'application/json', authorization: box.sb.adminToken };
    const res = await fetch(`${box.sb.url}/integrations/${made.body.id}?dryRun=true`, { method: 'DELETE', headers });
    expect(res.status).toBe(200);
  });
});

describe('a delete payload sent for a kind that takes none', () => {
  it('is refused naming the kind with its article ("An object_store integration"), not "A object_store"', async () => {
    const made = await call(box.sb, 'POST', '/integrations', { body: bodyFor('object_store') });
    const r = await call(box.sb, 'DELETE', `/integrations/${made.body.id}`, { body: { username: 'u', password: 'p' } });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toContain('An object_store integration is deleted without a request body');
  });
});
