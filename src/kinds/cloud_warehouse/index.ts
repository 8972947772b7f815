/** cloud_warehouse (interface 2.8): a cloud warehouse, keyed by its host. */
import { hostOf } from '../../service/kinds.js';
import { isPlainObject } from '../../util/object.js';
import { byAuthentication, defineKind } from '../kind.js';

export const cloudWarehouse = defineKind({
  type: 'cloud_warehouse',
  configSchema: 'config/cloud_warehouse.json',
  identity: (c) => `host=${hostOf(c.host)}`,
  naturalKeyFields: ['host'],
  identityField: ['spec', 'config', 'host'],
  masked: ['username', 'password', 'privateKey', 'clientSecret', 'oauthPrivateKey'],
  // 2.8 privateKey: "New lines in the key are replaced by a backslash followed by n"
  escapedNewlines: ['privateKey'],
  nonEditable: ['type', 'autoBootstrap', 'config.host', 'config.database'],
  deleteSchema: 'delete/cloud_warehouse.json',
  requiredCredentials: byAuthentication({
    userPassword: [['username'], ['password']],
    keyPair: [['privateKey']],
    oAuth: (c) => {
      const oauth = c.oAuthClientConfig;
      if (!isPlainObject(oauth)) return [];
      const cert = oauth.useCertificate !== false && oauth.useCertificate !== 'false';
      return [['oAuthClientConfig', cert ? 'oauthPrivateKey' : 'clientSecret']];
    },
  }),
  scripts: ['create', 'edit', 'delete', 'cleanup'],
});
