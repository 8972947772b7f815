/**
 * Generated scripts of the manual flow (interface 4.1): SQL-like text that reflects the config —
 * the database, roles, users and grants it would create or drop. Credentials are never echoed:
 * passwords appear as placeholders the user fills in.
 */
import type { ScriptPhase } from '../../service/kinds.js';
import type { IntegrationType } from '../../kinds/registry.js';
import { effectiveConfig } from './body.js';
import { withArticle } from '../../util/strings.js';

type Config = Record<string, unknown>;

function s(value: unknown, fallback: string): string {
  return typeof value === 'string' && value !== '' ? value : fallback;
}

function ident(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

/** The system account the service connects as. */
function systemUser(config: Config): string {
  const okta = config.okta as Config | undefined;
  return s(config.username, s(config.databaseUser, s(okta?.username, 'service_system_user')));
}

function impersonationRole(type: IntegrationType, config: Config): string | undefined {
  const imp = config.impersonation as Config | undefined;
  // Defaults (the role per kind) come from the interface tables: the config has been through effectiveConfig.
  if (imp?.enabled !== true || typeof imp.role !== 'string') return undefined;
  return imp.role;
}

function header(phase: ScriptPhase, type: IntegrationType, config: Config, id?: string): string[] {
  const target = s(config.host, s(config.workspaceUrl, type));
  return [
    `-- govops sandbox: ${phase} script for ${withArticle(type)} integration${id ? ` (id ${id})` : ''}`,
    `-- target: ${target}`,
    `-- Run these statements as a privileged user, then continue with the next step of the manual flow.`,
  ];
}

function setup(type: IntegrationType, config: Config, editing: boolean): string[] {
  const db = s(config.database, 'service');
  const user = systemUser(config);
  const imp = impersonationRole(type, config);
  const lines: string[] = [];
  switch (type) {
    case 'sql_analytics': {
      const schema = s(config.schema, 'service');
      lines.push(
        `USE ${ident(db)};`,
        editing ? `-- login ${ident(user)} already exists` : `CREATE LOGIN ${ident(user)} WITH PASSWORD = '<PASSWORD>';`,
        editing ? `-- user ${ident(user)} already exists` : `CREATE USER ${ident(user)} FOR LOGIN ${ident(user)};`,
        `CREATE SCHEMA IF NOT EXISTS ${ident(schema)} AUTHORIZATION ${ident(user)};`,
        `GRANT CREATE VIEW, CREATE FUNCTION TO ${ident(user)};`,
        `GRANT SELECT, ALTER ON SCHEMA::${ident(schema)} TO ${ident(user)};`,
      );
      break;
    }
    case 'columnar_warehouse':
      lines.push(
        editing ? `-- user ${ident(user)} already exists` : `CREATE USER ${ident(user)} PASSWORD '<PASSWORD>';`,
        editing ? `-- database ${ident(db)} already exists` : `CREATE DATABASE ${ident(db)} OWNER ${ident(user)};`,
        `GRANT CREATE ON DATABASE ${ident(db)} TO ${ident(user)};`,
        `GRANT SELECT ON ALL TABLES IN SCHEMA information_schema TO ${ident(user)};`,
      );
      break;
    case 'cloud_warehouse': {
      const warehouse = s(config.warehouse, 'COMPUTE_WH');
      const role = `${user.toUpperCase()}_ROLE`;
      lines.push(
        `CREATE ROLE IF NOT EXISTS ${ident(role)};`,
        editing ? `-- user ${ident(user)} already exists` : `CREATE USER IF NOT EXISTS ${ident(user)} PASSWORD = '<PASSWORD>' DEFAULT_ROLE = ${ident(role)};`,
        `GRANT ROLE ${ident(role)} TO USER ${ident(user)};`,
        editing ? `-- database ${ident(db)} already exists` : `CREATE DATABASE IF NOT EXISTS ${ident(db)};`,
        `GRANT OWNERSHIP ON DATABASE ${ident(db)} TO ROLE ${ident(role)};`,
        `GRANT USAGE ON WAREHOUSE ${ident(warehouse)} TO ROLE ${ident(role)};`,
        `GRANT APPLY MASKING POLICY, APPLY ROW ACCESS POLICY ON ACCOUNT TO ROLE ${ident(role)};`,
      );
      break;
    }
    case 'lakehouse': {
      const catalog = s(config.catalog, 'service');
      const group = (config.groupPattern as Config | undefined)?.deny;
      lines.push(
        `CREATE CATALOG IF NOT EXISTS ${catalog};`,
        `GRANT ALL PRIVILEGES ON CATALOG ${catalog} TO \`service_principal\`;`,
        `REVOKE ALL PRIVILEGES ON CATALOG ${catalog} FROM \`account users\`;`,
      );
      if (typeof group === 'string') lines.push(`-- exemption group (excluded from data policies): ${group}`);
      break;
    }
    default:
      lines.push(`-- no statements for ${type}`);
  }
  if (imp) {
    lines.push(`CREATE ROLE ${ident(imp)};`, `GRANT ${ident(imp)} TO ${ident(user)};`);
  }
  return lines;
}

function teardown(type: IntegrationType, config: Config, phase: ScriptPhase): string[] {
  const db = s(config.database, 'service');
  const user = systemUser(config);
  const imp = impersonationRole(type, config);
  const lines: string[] = [];
  if (type === 'sql_analytics') {
    const schema = s(config.schema, 'service');
    if (phase === 'post-cleanup') {
      lines.push(`USE ${ident(db)};`, `DROP USER IF EXISTS ${ident(user)};`, `DROP LOGIN ${ident(user)};`);
    } else {
      lines.push(
        `USE ${ident(db)};`,
        `-- drop the secure views and functions the service generated`,
        `DROP SCHEMA IF EXISTS ${ident(schema)};`,
        `REVOKE CREATE VIEW, CREATE FUNCTION FROM ${ident(user)};`,
      );
      if (phase === 'delete') lines.push(`DROP USER IF EXISTS ${ident(user)};`, `DROP LOGIN ${ident(user)};`);
    }
  } else if (type === 'columnar_warehouse') {
    lines.push(`DROP DATABASE IF EXISTS ${ident(db)};`, `DROP USER IF EXISTS ${ident(user)};`);
  } else if (type === 'cloud_warehouse') {
    const role = `${user.toUpperCase()}_ROLE`;
    lines.push(
      `DROP DATABASE IF EXISTS ${ident(db)};`,
      `DROP USER IF EXISTS ${ident(user)};`,
      `DROP ROLE IF EXISTS ${ident(role)};`,
    );
  }
  if (imp && phase !== 'post-cleanup') lines.push(`DROP ROLE IF EXISTS ${ident(imp)};`);
  return lines;
}

export function generateScript(phase: ScriptPhase, type: IntegrationType, rawConfig: Config, id?: string): string {
  const config = effectiveConfig(type, rawConfig);
  let body: string[];
  switch (phase) {
    case 'initial-create': {
      const user = systemUser(config);
      body = [
        type === 'sql_analytics'
          ? `CREATE LOGIN ${ident(user)} WITH PASSWORD = '<PASSWORD>';`
          : `CREATE USER ${ident(user)} PASSWORD '<PASSWORD>';`,
        `-- next: POST /integrations/scripts/create for the remaining script`,
      ];
      break;
    }
    case 'create':
      body = setup(type, config, false);
      break;
    case 'edit':
      body = setup(type, config, true);
      break;
    default:
      body = teardown(type, config, phase);
  }
  return [...header(phase, type, config, id), ...body, ''].join('\n');
}
