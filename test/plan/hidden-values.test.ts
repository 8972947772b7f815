/**
 * A service that hides more than the credential fields the interface names (an access key id, a user name), in any
 * form, and fields that held a secret when govops last applied: the plan never shows or compares such a value as a
 * value (docs/decisions.md "A value the service hides where govops does not expect it").
 */
import { describe, expect, it } from 'vitest';
import { diffIntegration } from '../../src/plan/integrations.js';
import { looksMasked, urlWithoutCredential } from '../../src/service/kinds.js';
import { exportConfig } from '../../src/export/config.js';
import { diffWebhook } from '../../src/plan/webhooks.js';
import { SHAPES, integration, liveOf, liveWebhookOf, owned, planner, stateWith, webhook } from './fixtures.js';

const plan = planner({ prune: false, allowReplace: false });

const accessKeyStore = (keyId = 'AKIAEXAMPLEKEYID', role = 'arn:aws:iam::123456789012:role/r') =>
  integration(
    'store',
    'object_store',
    {
      cloudAccountId: '123456789012',
      cloudRegion: 'eu-west-1',
      cloudLocationRole: role,
      cloudLocationPath: 's3://bucket/data',
      authenticationType: 'accessKey',
      cloudAccessKeyId: keyId,
      cloudSecretAccessKey: { fromEnv: 'GOVOPS_SECRET_KEY' },
    },
    { secretPaths: ['spec.config.cloudSecretAccessKey'] },
  );

describe('looksMasked', () => {
  it('reads the interface mask, runs of mask characters and bracketed words as hidden; plain values as values', () => {
    for (const v of ['********', '****', 'AKIA****', '***123', '•••', '[REDACTED]', '<hidden>', '(masked)', 'REDACTED', ' [secret] ']) {
      expect(looksMasked(v), v).toBe(true);
    }
    for (const v of ['AKIAEXAMPLEKEYID', 'a*b', 'svc_user', '', 'redacted-bucket', 'secret-store', 12, null, undefined, ['****']]) {
      expect(looksMasked(v), String(v)).toBe(false);
    }
  });
});

describe('a field the service hides although it is no credential', () => {
  const d = accessKeyStore();
  // the live secret access key: the fixture masks it; the access key id as a service that masks it too shows it
  const hidden = (form: string) => liveOf(d, '7', 'enabled', { cloudAccessKeyId: form });

  it('is the same while the manifest is what govops last applied, whatever the mask form', () => {
    for (const form of ['********', 'AKIA****', '[REDACTED]']) {
      const r = diffIntegration(SHAPES, d, hidden(form), owned(d, '7'));
      expect(r, form).toEqual({ changes: [], notComparable: [] });
    }
    const p = plan([d], { integrations: [hidden('AKIA****')] }, stateWith(owned(d, '7')));
    expect(p.changes.map((c) => c.action)).toEqual(['noop']);
  });

  it('is a change (shown as sensitive) when the manifest changed it: nothing else differs', () => {
    const before = accessKeyStore('AKIAOLDKEYID00000');
    const r = diffIntegration(SHAPES, d, hidden('AKIA****'), owned(before, '7'));
    expect(r.changes).toEqual([{ path: 'config.cloudAccessKeyId', sensitive: true, forcesReplace: false }]);
    expect(JSON.stringify(r)).not.toContain('AKIA');
  });

  it('cannot be compared beside another change (the update sends it anyway), nor without a state entry', () => {
    const before = accessKeyStore('AKIAEXAMPLEKEYID', 'arn:aws:iam::123456789012:role/old');
    const live = liveOf(before, '7', 'enabled', { cloudAccessKeyId: 'AKIA****' });
    const r = diffIntegration(SHAPES, d, live, owned(before, '7'));
    expect(r.changes.map((c) => c.path)).toEqual(['config.cloudLocationRole']);
    expect(r.notComparable).toEqual(['config.cloudAccessKeyId']);
    expect(diffIntegration(SHAPES, d, hidden('********'), undefined)).toEqual({ changes: [], notComparable: ['config.cloudAccessKeyId'] });
  });

  it('a live value equal to the manifest\'s is that value, even when it looks like a mask', () => {
    const stars = accessKeyStore('KEY****');
    expect(diffIntegration(SHAPES, stars, liveOf(stars, '7'), undefined)).toEqual({ changes: [], notComparable: [] });
  });
});

describe('a field that held a secret when govops last applied', () => {
  const withRef = integration(
    'sql',
    'sql_analytics',
    { host: 'sql.example.com', database: 'govern', schema: 'views', username: 'svc', password: 'pw', connectArgs: { fromEnv: 'GOVOPS_SECRET_ARGS' } },
    { secretPaths: ['spec.config.connectArgs'] },
  );

  it('stays sensitive when the manifest makes it a literal: the live value it replaces is never shown', () => {
    const literal = integration('sql', 'sql_analytics', { host: 'sql.example.com', database: 'govern', schema: 'views', username: 'svc', password: 'pw', connectArgs: 'Encrypt=yes' });
    // the service shows connection arguments in clear: what the reference resolved to
    const live = liveOf(literal, '3', 'enabled', { connectArgs: 'Encrypt=yes;UID=admin;PWD=LiveSecret99' });
    const r = diffIntegration(SHAPES, literal, live, owned(withRef, '3'));
    expect(r.changes).toEqual([{ path: 'config.connectArgs', sensitive: true, forcesReplace: false }]);
    expect(JSON.stringify(r)).not.toContain('LiveSecret99');
    // without that state entry too: the live value carries a credential (a manifest matching another team's integration)
    expect(diffIntegration(SHAPES, literal, live, undefined).changes).toEqual([{ path: 'config.connectArgs', sensitive: true, forcesReplace: false }]);
    // a value that carries none is a plain field, shown as such
    const plain = liveOf(literal, '3', 'enabled', { connectArgs: 'Encrypt=no' });
    expect(diffIntegration(SHAPES, literal, plain, undefined).changes[0]).toMatchObject({ path: 'config.connectArgs', sensitive: false, before: 'Encrypt=no' });
  });
});

describe('export of values that would leak or mean the mask', () => {
  const ref = (path: readonly string[]) => ({ fromEnv: `V_${path.join('_')}` });

  it('writes a reference for a hidden value and for a connection string carrying a password, the value otherwise', () => {
    const store = exportConfig(SHAPES, 'object_store', { ...liveOf(accessKeyStore(), '1').config, cloudAccessKeyId: 'AKIA****' }, ref);
    expect(store?.cloudAccessKeyId).toEqual({ fromEnv: 'V_cloudAccessKeyId' });
    expect(store?.cloudSecretAccessKey).toEqual({ fromEnv: 'V_cloudSecretAccessKey' });
    expect(JSON.stringify(store)).not.toContain('****');
    const sql = exportConfig(SHAPES, 'sql_analytics', { host: 'h.example.com', database: 'd', schema: 's', username: '********', password: '********', connectArgs: 'Encrypt=yes;UID=a;PWD=Adm1n' }, ref);
    expect(sql?.connectArgs).toEqual({ fromEnv: 'V_connectArgs' });
    const plain = exportConfig(SHAPES, 'sql_analytics', { host: 'h.example.com', database: 'd', schema: 's', username: '********', password: '********', connectArgs: 'Encrypt=yes' }, ref);
    expect(plain?.connectArgs).toBe('Encrypt=yes');
  });
});

describe('a webhook whose live url carries a credential', () => {
  it('its url change is sensitive, without the live value; a url carrying none is shown', () => {
    const d = webhook('hook', { url: 'https://hooks.example.com/mine' });
    const withToken = { ...liveWebhookOf(d, '4'), url: 'https://hooks.example.com/x?token=LiveHookToken42' };
    const r = diffWebhook(d, withToken, undefined, true);
    expect(r.changes).toEqual([{ path: 'url', sensitive: true, forcesReplace: true }]);
    expect(JSON.stringify(r)).not.toContain('LiveHookToken42');
    const withPassword = { ...liveWebhookOf(d, '4'), url: 'https://user:LiveHookPass42@hooks.example.com/x' };
    expect(JSON.stringify(diffWebhook(d, withPassword, undefined, true))).not.toContain('LiveHookPass42');
    // A token alone as the user name (Basic auth `TOKEN:`): the url is still another team's credential.
    const withBareToken = { ...liveWebhookOf(d, '4'), url: 'https://LiveBareToken42@hooks.example.com/x' };
    expect(diffWebhook(d, withBareToken, undefined, true).changes).toEqual([{ path: 'url', sensitive: true, forcesReplace: true }]);
    expect(urlWithoutCredential(withBareToken.url)).toBe('https://***@hooks.example.com/x');
    const plain = { ...liveWebhookOf(d, '4'), url: 'https://hooks.example.com/other' };
    expect(diffWebhook(d, plain, undefined, true).changes[0]).toMatchObject({ path: 'url', sensitive: false, before: 'https://hooks.example.com/other' });
  });
});

describe('a live url or connection string carrying a credential under another common name', () => {
  // OAuth's `access_token` (RFC 6750), GitLab's `private_token`, `client_secret`, an Azure SAS `sig`, an Azure Functions
  // `code`, a Google API `key`, a `subscription-key`, a connection string's `AccessToken=`: each is another team's
  // credential when a manifest of the same name matches its webhook or integration, and the preview would show it.
  const urls = [
    'https://hooks.example.com/x?access_token=LiveCred0001',
    'https://hooks.example.com/x?a=1&private_token=LiveCred0002',
    'https://hooks.example.com/x?client_secret=LiveCred0003',
    'https://acct.blob.example.net/c?sv=2022-11-02&sr=b&sig=LiveCred0004',
    'https://fn.example.net/api/hook?code=LiveCred0005',
    'https://hooks.example.com/x?key=LiveCred0006',
    'https://hooks.example.com/x?subscription-key=LiveCred0007',
    'https://hooks.example.com/x?X-Amz-Signature=LiveCred0008',
    'https://hooks.example.com/x?auth=LiveCred0009',
  ];

  it('a webhook url change is sensitive, without the live value', () => {
    const d = webhook('hook', { url: 'https://hooks.example.com/mine' });
    for (const url of urls) {
      const r = diffWebhook(d, { ...liveWebhookOf(d, '4'), url }, undefined, true);
      expect(r.changes, url).toEqual([{ path: 'url', sensitive: true, forcesReplace: true }]);
      expect(JSON.stringify(r)).not.toContain('LiveCred');
    }
  });

  it('a connectArgs change is sensitive, without the live value; export writes a reference for it', () => {
    const literal = integration('sql', 'sql_analytics', { host: 'sql.example.com', database: 'govern', schema: 'views', username: 'svc', password: 'pw', connectArgs: 'Encrypt=yes' });
    for (const args of ['Encrypt=yes;AccessToken=LiveCred0010', 'Encrypt=yes;Client_Secret=LiveCred0011', 'Encrypt=yes;ApiToken=LiveCred0012']) {
      const live = liveOf(literal, '3', 'enabled', { connectArgs: args });
      const r = diffIntegration(SHAPES, literal, live, undefined);
      expect(r.changes, args).toEqual([{ path: 'config.connectArgs', sensitive: true, forcesReplace: false }]);
      expect(JSON.stringify(r)).not.toContain('LiveCred');
      const ref = (path: readonly string[]) => ({ fromEnv: `V_${path.join('_')}` });
      const sql = exportConfig(SHAPES, 'sql_analytics', { host: 'h.example.com', database: 'd', schema: 's', username: '********', password: '********', connectArgs: args }, ref);
      expect(sql?.connectArgs, args).toEqual({ fromEnv: 'V_connectArgs' });
    }
  });

  it('names that merely contain such a word are values', () => {
    const d = webhook('hook', { url: 'https://hooks.example.com/mine' });
    for (const url of ['https://hooks.example.com/x?keyspace=a', 'https://hooks.example.com/x?tokens_left=3&codec=x&signed=yes', 'https://hooks.example.com/x?page=2']) {
      expect(diffWebhook(d, { ...liveWebhookOf(d, '4'), url }, undefined, true).changes[0], url).toMatchObject({ path: 'url', sensitive: false, before: url });
    }
  });
});

describe('a live webhook url whose path is its credential (a chat webhook: Slack, Discord, Teams, Mattermost)', () => {
  const urls = [
    'https://hooks.slack.com/services/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',
    // a Slack token is 24 letters and digits drawn at random: about one in 70 has no digit
    'https://hooks.slack.com/services/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',
    'https://discord.com/api/webhooks/123456789012345678/Xy7-Zq_3aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwX',
    'https://contoso.webhook.office.com/webhookb2/1f2e3d4c-aaaa-bbbb-cccc-0123456789ab@9a8b7c6d-1111-2222-3333-444455556666/IncomingWebhook/4f1c2b3a9d8e7f6a5b4c3d2e1f0a9b8c/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d',
    'https://chat.example.com/hooks/x8k2m4p6q8r1t3v5w7y9z0a2b4',
  ];

  it('a url change is sensitive, without the live value; notes name it by its origin', () => {
    const d = webhook('hook', { url: 'https://hooks.example.com/mine' });
    for (const url of urls) {
      const r = diffWebhook(d, { ...liveWebhookOf(d, '4'), url }, undefined, true);
      expect(r.changes, url).toEqual([{ path: 'url', sensitive: true, forcesReplace: true }]);
      const shown = urlWithoutCredential(url);
      expect(shown, url).toBe(`${new URL(url).origin}/…`);
    }
  });

  it('a path of words, numbers and ids is a path: shown', () => {
    const d = webhook('hook', { url: 'https://hooks.example.com/mine' });
    for (const url of [
      'https://hooks.example.com/api/v2/notifications-2024/incoming_events',
      'https://hooks.example.com/receivers/550e8400-e29b-41d4-a716-446655440000',
      'https://hooks.example.com/teams/12345678901234567890/alerts',
      'https://hooks.example.com/governancenotifications/x',
      'https://hooks.example.com/api/ProcessIncomingWebhookEvents',
      'https://hooks.example.com/HTTPNotificationReceiver/x',
    ]) {
      expect(diffWebhook(d, { ...liveWebhookOf(d, '4'), url }, undefined, true).changes[0], url).toMatchObject({ path: 'url', sensitive: false, before: url });
      expect(urlWithoutCredential(url)).toBe(url);
    }
  });
});
