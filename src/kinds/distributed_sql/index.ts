/**
 * distributed_sql: created with its type alone (no autoBootstrap, no config, nothing else to compare), and one
 * per service at most (its natural key is the type).
 */
import { defineKind } from '../kind.js';

export const distributedSql = defineKind({
  type: 'distributed_sql',
  configless: true,
  naturalKeyFields: [],
  identityField: ['spec', 'type'],
  exportName: () => 'distributed-sql',
  masked: [],
  nonEditable: ['type'],
  scripts: [],
});
