/** columnar_warehouse (interface 2.7): a columnar warehouse, keyed by its host. */
import { hostOf } from '../../service/kinds.js';
import { byAuthentication, defineKind } from '../kind.js';

export const columnarWarehouse = defineKind({
  type: 'columnar_warehouse',
  configSchema: 'config/columnar_warehouse.json',
  identity: (c) => `host=${hostOf(c.host)}`,
  naturalKeyFields: ['host'],
  identityField: ['spec', 'config', 'host'],
  masked: ['username', 'password', 'secretKey', 'sessionToken'],
  nonEditable: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  deleteSchema: 'delete/columnar_warehouse.json',
  requiredCredentials: byAuthentication({
    userPassword: [['username'], ['password']],
    accessKey: [['secretKey']],
    okta: [['okta', 'username'], ['okta', 'password']],
  }),
  scripts: ['create', 'initial-create', 'edit', 'delete', 'cleanup'],
});
