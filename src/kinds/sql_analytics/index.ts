/** sql_analytics (interface 2.4): a SQL analytics server, keyed by its host. */
import { hostOf } from '../../service/kinds.js';
import { defineKind } from '../kind.js';

export const sqlAnalytics = defineKind({
  type: 'sql_analytics',
  configSchema: 'config/sql_analytics.json',
  identity: (c) => `host=${hostOf(c.host)}`,
  naturalKeyFields: ['host'],
  identityField: ['spec', 'config', 'host'],
  masked: ['username', 'password'],
  nonEditable: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  deleteSchema: 'delete/sql_analytics.json',
  requiredCredentials: () => [['username'], ['password']],
  scripts: ['create', 'initial-create', 'edit', 'delete', 'cleanup', 'post-cleanup'],
});
