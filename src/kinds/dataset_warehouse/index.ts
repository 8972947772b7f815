/** dataset_warehouse (interface 2.6): a dataset warehouse, keyed by its dataset and role; manual flow only. */
import { defineKind } from '../kind.js';

export const datasetWarehouse = defineKind({
  type: 'dataset_warehouse',
  configSchema: 'config/dataset_warehouse.json',
  identity: (c) => `dataset=${String(c.dataset ?? 'service')}:role=${String(c.role ?? '')}`,
  naturalKeyFields: ['dataset', 'role'],
  // role is editable: a changed role is drift of the same integration, not another one
  lastingIdentity: (c) => `dataset=${String(c.dataset ?? 'service')}`,
  identityField: ['spec', 'config', 'dataset'],
  displayName: (c) => `${String(c.dataset ?? 'service')}`,
  masked: ['credential'],
  nonEditable: ['type', 'autoBootstrap', 'config.location', 'config.dataset'],
  manualOnly: true,
  requiredCredentials: () => [['credential']],
  exportName: (c) => `${String(c.dataset ?? 'service')}-${String(c.role ?? '')}`,
  scripts: [],
});
