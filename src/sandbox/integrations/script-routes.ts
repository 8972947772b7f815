/** The six script endpoints (interface 4.1): text/plain scripts, manual flow only, post-cleanup after cleanup. */
import { type ScriptPhase } from '../../service/kinds.js';
import { SCRIPT_KINDS, isIntegrationType, naturalKey } from '../../kinds/registry.js';
import { HttpError, type Route, type SandboxRequest, type SandboxResponse } from '../http.js';
import type { IntegrationContext } from './context.js';
import { isEmptyBody, parseId, parseIntegrationBody, type ParsedBody } from './body.js';
import { generateScript } from './scripts.js';
import { withArticle } from '../../util/strings.js';

function text(script: string): SandboxResponse {
  return { status: 200, text: script, headers: { 'content-type': 'text/plain; charset=utf-8' } };
}

function kinds(phase: ScriptPhase): string {
  return [...SCRIPT_KINDS[phase]].join(', ');
}

/** Body rules of every script endpoint with a body: type of the listed kinds, autoBootstrap false, config. */
function scriptBody(phase: ScriptPhase, body: unknown): ParsedBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'The request body must be an object with type, autoBootstrap (false) and config');
  }
  const b = body as Record<string, unknown>;
  if (!isIntegrationType(b.type) || !SCRIPT_KINDS[phase].has(b.type)) {
    throw new HttpError(400, `scripts/${phase} accepts only these types: ${kinds(phase)} (got ${JSON.stringify(b.type)})`);
  }
  if (b.autoBootstrap !== false) {
    throw new HttpError(400, 'autoBootstrap is required and must be false: scripts are for manually configured integrations');
  }
  if (typeof b.config !== 'object' || b.config === null || Array.isArray(b.config)) {
    throw new HttpError(400, 'config is required');
  }
  return parseIntegrationBody(body);
}

function cleanupKey(b: ParsedBody): string {
  return `${naturalKey(b.type, b.config)}|database=${String(b.config.database ?? '')}`;
}

function byBody(ctx: IntegrationContext, phase: ScriptPhase) {
  return (req: SandboxRequest): SandboxResponse => {
    const b = scriptBody(phase, req.body);
    if (phase === 'cleanup') {
      ctx.store.addCleanup(cleanupKey(b));
    } else if (phase === 'post-cleanup' && !ctx.store.cleanups.has(cleanupKey(b))) {
      throw new HttpError(400, 'scripts/post-cleanup must follow scripts/cleanup for the same configuration: call POST /integrations/scripts/cleanup first');
    }
    return text(generateScript(phase, b.type, b.config));
  };
}

function editScript(ctx: IntegrationContext, req: SandboxRequest): SandboxResponse {
  const id = parseId(req);
  const item = ctx.store.get(id);
  if (!item) throw new HttpError(404, `Integration ${id} not found`);
  const b = scriptBody('edit', req.body);
  if (b.type !== item.type) throw new HttpError(400, `Integration ${id} is ${withArticle(item.type)} integration, not ${b.type}`);
  if (item.autoBootstrap) {
    throw new HttpError(400, `Integration ${id} was created with autoBootstrap true; edit scripts are for manually configured integrations`);
  }
  return text(generateScript('edit', b.type, b.config, String(id)));
}

function deleteScript(ctx: IntegrationContext, req: SandboxRequest): SandboxResponse {
  const id = parseId(req);
  const item = ctx.store.get(id);
  if (!item) throw new HttpError(404, `Integration ${id} not found`);
  if (!isEmptyBody(req.body)) throw new HttpError(400, 'scripts/delete takes no request body');
  if (!SCRIPT_KINDS.delete.has(item.type)) {
    throw new HttpError(400, `scripts/delete accepts only these types: ${kinds('delete')} (integration ${id} is ${item.type})`);
  }
  if (item.autoBootstrap) {
    throw new HttpError(400, `Integration ${id} was created with autoBootstrap true; delete it with the privileged credentials instead of a script`);
  }
  return text(generateScript('delete', item.type, item.config, String(id)));
}

export function scriptRoutes(ctx: IntegrationContext): Route[] {
  const auth = 'integration' as const;
  return [
    { method: 'POST', pattern: '/integrations/scripts/create', auth, handler: byBody(ctx, 'create') },
    { method: 'POST', pattern: '/integrations/scripts/initial-create', auth, handler: byBody(ctx, 'initial-create') },
    { method: 'POST', pattern: '/integrations/scripts/cleanup', auth, handler: byBody(ctx, 'cleanup') },
    { method: 'POST', pattern: '/integrations/scripts/post-cleanup', auth, handler: byBody(ctx, 'post-cleanup') },
    { method: 'POST', pattern: '/integrations/:id/scripts/edit', auth, handler: (req) => editScript(ctx, req) },
    { method: 'POST', pattern: '/integrations/:id/scripts/delete', auth, handler: (req) => deleteScript(ctx, req) },
  ];
}
