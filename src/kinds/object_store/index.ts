/** object_store (interface 2.3): a cloud object store; data sources are registered under it. */
import { locationAsCompared } from '../../service/data-sources.js';
import { byAuthentication, defineKind } from '../kind.js';

export const objectStore = defineKind({
  type: 'object_store',
  configSchema: 'config/object_store.json',
  identity: (c) => `name=${String(c.name ?? '')}`,
  naturalKeyFields: ['name'],
  identityField: ['spec', 'config', 'name'],
  // "unique across all object_store integrations" (interface 2.3, 8), as `name` is
  uniqueFields: ['cloudLocationPath'],
  // compared as written; two paths one by govops' reading of a location (trailing slashes aside) are warned of
  uniqueLookalike: { cloudLocationPath: locationAsCompared },
  displayName: (c) => (typeof c.name === 'string' ? c.name : undefined),
  masked: ['cloudSecretAccessKey'],
  nonEditable: ['type', 'autoBootstrap', 'config.name', 'config.cloudAccountId', 'config.cloudLocationPath'],
  manualOnly: true,
  requiredCredentials: byAuthentication({ accessKey: [['cloudSecretAccessKey']] }),
  scripts: [],
  hostsDataSources: true,
});
