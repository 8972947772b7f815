/**
 * Object-store data source endpoints (interface 2.3 payload; 4.2 does not show the endpoints, the sandbox
 * serves them where govops looks by default): create several in one request, list, read one, delete
 * (soft, then hard). Validation from what the interface implies: the integration exists, is an
 * object_store and is `enabled`; every prefix lies under its `cloudLocationPath`; names and prefixes are
 * unique among its data sources. One invalid item rejects the whole request (nothing is created).
 */
import { DEFAULT_DATA_SOURCE_DELETE_PATH, DEFAULT_DATA_SOURCES_PATH } from '../../service/data-sources.js';
import { isPlainObject, type PlainObject } from '../../util/object.js';
import type { Behaviours } from '../behaviours.js';
import { HttpError, type Caller, type Route, type SandboxRequest, type SandboxResponse } from '../http.js';
import type { IntegrationStore } from '../integrations/store.js';
import { CREATE_FIELDS, ITEM_FIELDS, OWNER_KIND, isUnderLocation } from './interface.js';
import type { DataSourceStore, StoredDataSource } from './store.js';
import { withArticle } from '../../util/strings.js';

export interface DataSourceContext {
  store: DataSourceStore;
  integrations: IntegrationStore;
  behaviours: Behaviours;
  emit(notificationType: string, metadata: Record<string, unknown>, actor?: Caller): void;
}

type Obj = PlainObject;

/** A data source record as GET shows it, under the behaviours. */
export function recordView(d: StoredDataSource, b: Behaviours): Obj {
  const id = b.has('string-ids') ? String(d.id) : d.id;
  const integrationId = b.has('string-ids') ? String(d.integrationId) : d.integrationId;
  const deleted = d.deletedAt !== undefined;
  const out: Obj = b.has('data-source-metadata')
    ? { id, name: d.dataSourceName, deleted, metadata: { prefix: d.prefix, integrationId, dataSourceName: d.dataSourceName } }
    : { dataSourceId: id, dataSourceName: d.dataSourceName, prefix: d.prefix, integrationId, deleted };
  if (b.has('extra-fields')) Object.assign(out, { createdAt: d.createdAt, blobHandlerType: 'Native S3', recordCount: 0 });
  return out;
}

/** A create response item: `dataSourceId`, `prefix`, `dataSourceName` (interface 2.3). */
function createdView(d: StoredDataSource, b: Behaviours): Obj {
  const out: Obj = { dataSourceId: b.has('string-ids') ? String(d.id) : d.id, prefix: d.prefix, dataSourceName: d.dataSourceName };
  if (b.has('extra-fields')) Object.assign(out, { integrationId: d.integrationId, createdAt: d.createdAt });
  return out;
}

function checkType(field: string, spec: { type: string }, value: unknown): string | undefined {
  if (value === undefined) return `${field} is required`;
  if (spec.type === 'array' ? !Array.isArray(value) : typeof value !== spec.type) return `${field} must be ${withArticle(spec.type)}`;
  return undefined;
}

interface ParsedCreate {
  integrationId: number;
  items: Array<{ dataSourceName: string; prefix: string }>;
}

function parseCreate(body: unknown): ParsedCreate {
  if (!isPlainObject(body)) throw new HttpError(400, 'The request body must be an object with type, integrationId and dataSources');
  const problems: string[] = [];
  for (const [field, spec] of Object.entries(CREATE_FIELDS)) {
    const p = checkType(field, spec, body[field]);
    if (p) problems.push(p);
  }
  if (typeof body.type === 'string' && body.type !== OWNER_KIND) problems.push(`type must be ${OWNER_KIND} (data sources are registered under object_store integrations)`);
  if (typeof body.integrationId === 'number' && !Number.isInteger(body.integrationId)) problems.push('integrationId must be an integration id');
  const items: ParsedCreate['items'] = [];
  if (Array.isArray(body.dataSources)) {
    body.dataSources.forEach((raw: unknown, i) => {
      if (!isPlainObject(raw)) {
        problems.push(`dataSources[${i}] must be an object with dataSourceName and prefix`);
        return;
      }
      for (const [field, spec] of Object.entries(ITEM_FIELDS)) {
        const p = checkType(`dataSources[${i}].${field}`, spec, raw[field]);
        if (p) problems.push(p);
      }
      if (typeof raw.dataSourceName === 'string' && typeof raw.prefix === 'string') items.push({ dataSourceName: raw.dataSourceName, prefix: raw.prefix });
    });
  }
  if (problems.length) throw new HttpError(400, `Invalid request: ${problems.join('; ')}`);
  return { integrationId: body.integrationId as number, items };
}

function create(ctx: DataSourceContext, req: SandboxRequest): SandboxResponse {
  const { integrationId, items } = parseCreate(req.body);
  const integration = ctx.integrations.get(integrationId);
  if (!integration) throw new HttpError(404, `Integration ${integrationId} not found`);
  if (integration.type !== OWNER_KIND) {
    throw new HttpError(400, `Integration ${integrationId} is ${withArticle(integration.type)} integration: data sources are registered under object_store integrations`);
  }
  if (integration.status !== 'enabled') {
    throw new HttpError(409, `Integration ${integrationId} is ${integration.status}: data sources can be registered once it is enabled`);
  }
  const location = String(integration.config.cloudLocationPath ?? '');
  const taken = ctx.store.active(integrationId);
  const names = new Map(taken.map((d) => [d.dataSourceName, d.id]));
  const prefixes = new Map(taken.map((d) => [d.prefix, d.id]));
  items.forEach((item, i) => {
    if (!isUnderLocation(item.prefix, location)) {
      throw new HttpError(400, `dataSources[${i}].prefix ${item.prefix} is not under the integration's cloudLocationPath ${location}`);
    }
    const byName = names.get(item.dataSourceName);
    if (byName !== undefined) {
      throw new HttpError(409, `A data source named ${item.dataSourceName} already exists in integration ${integrationId} (data source ${byName})`, { dataSourceId: byName });
    }
    const byPrefix = prefixes.get(item.prefix);
    if (byPrefix !== undefined) {
      throw new HttpError(409, `Prefix ${item.prefix} is already registered in integration ${integrationId} (data source ${byPrefix})`, { dataSourceId: byPrefix });
    }
    // Within the request too (later items see earlier ones; -1: not yet created).
    names.set(item.dataSourceName, -1);
    prefixes.set(item.prefix, -1);
  });
  const created = ctx.store.insert(integrationId, items);
  for (const d of created) {
    ctx.emit('modelCreated', { modelId: d.id, modelType: 'datasource', dataSourceName: d.dataSourceName, prefix: d.prefix, integrationId }, req.caller);
  }
  return { status: 200, body: created.map((d) => createdView(d, ctx.behaviours)) };
}

function find(ctx: DataSourceContext, req: SandboxRequest): StoredDataSource {
  const raw = req.params.id ?? '';
  const id = /^\d+$/.test(raw) ? Number(raw) : NaN;
  const d = Number.isSafeInteger(id) ? ctx.store.get(id) : undefined;
  if (!d) throw new HttpError(404, `Data source ${raw} not found`);
  return d;
}

function remove(ctx: DataSourceContext, req: SandboxRequest): SandboxResponse {
  const d = find(ctx, req);
  const how = ctx.store.delete(d);
  if (how === 'hard') {
    ctx.emit('modelDeleted', { modelId: d.id, modelType: 'datasource', dataSourceName: d.dataSourceName, integrationId: d.integrationId }, req.caller);
  }
  return { status: 200, body: { ...recordView(d, ctx.behaviours), deleted: true } };
}

/** Routes answer 404 as an unknown endpoint would when the service has no data sources (behaviour). */
function supported(ctx: DataSourceContext, fn: (req: SandboxRequest) => SandboxResponse): (req: SandboxRequest) => SandboxResponse {
  return (req) => {
    if (ctx.behaviours.has('no-data-sources')) throw new HttpError(404, `No endpoint ${req.method} ${req.path}`);
    return fn(req);
  };
}

export function dataSourceRoutes(ctx: DataSourceContext): Route[] {
  const auth = 'integration' as const;
  const base = DEFAULT_DATA_SOURCES_PATH;
  const list = (): SandboxResponse => ({ status: 200, body: ctx.store.list().map((d) => recordView(d, ctx.behaviours)) });
  return [
    { method: 'POST', pattern: base, auth, handler: supported(ctx, (req) => create(ctx, req)), creates: true },
    { method: 'GET', pattern: base, auth, handler: supported(ctx, list) },
    { method: 'GET', pattern: `${base}/:id`, auth, handler: supported(ctx, (req) => ({ status: 200, body: recordView(find(ctx, req), ctx.behaviours) })) },
    { method: 'DELETE', pattern: `${DEFAULT_DATA_SOURCE_DELETE_PATH}/:id`, auth, handler: supported(ctx, (req) => remove(ctx, req)), writes: true },
  ];
}
