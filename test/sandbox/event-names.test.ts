/**
 * Interface part 6, the event table, copied here from the interface document (rows with `a / b` give both names):
 * GET /webhooks/actions serves `ALL_NOTIFICATIONS` plus every one of them (4.3), and POST /webhooks takes each. The
 * sandbox serves and checks govops' own list (src/service/events.ts), which govops validate also checks manifests
 * against, so a name dropped from or misspelt in that list was shared by both; the existing test compared the sandbox
 * with that same list. Only a list written from the interface fails then.
 */
import { describe, expect, it } from 'vitest';
import { ADMIN, createHooks, hook, harnessPerFile } from './webhooks-helpers.js';

const h = harnessPerFile();

/** Part 6 of the interface, in its order. */
const INTERFACE_EVENTS = [
  'acknowledgedAccess', 'addedToProject', 'apiKeyRevoked', 'attributeAdded', 'attributeRemoved', 'attributeUpdated',
  'bulkJobStatus', 'certificationRequired', 'conflictingGlobalPolicies', 'dataSourceExpired', 'dataSourceExpiring',
  'dataSourceUpdated', 'deletedDatasourceRemovedFromProject', 'expiredDatasourceRemovedFromProject', 'firstQuery',
  'globalPolicyCreated', 'globalPolicyDeleted', 'globalPolicyDisabled', 'globalPolicyUpdated',
  'governanceSettingsUpdated', 'groupUserAdded', 'groupUserDeleted', 'healthCheckFailed', 'healthCheckResolved',
  'modelAccessApproved', 'modelAccessDenied', 'modelAccessRequested', 'modelAccessRevoked', 'modelAccessUpdated',
  'modelCommentCreated', 'modelCommentReply', 'modelCommentResolved', 'modelCopied', 'modelCreated', 'modelDeleted',
  'modelTagAdded', 'modelTagRemoved', 'modelUserAdded', 'modelUserDeleted', 'modelUserJoined',
  'nativeWorkspaceStateChanged', 'permissionsUpdated', 'policyAdjustmentCreated', 'policyAdjustmentExpired',
  'policyCertificationExpired', 'policyUpdated', 'projectDisabled', 'projectEqualizationMemberNotInCompliance',
  'projectEqualizationToggled', 'projectUpdated', 'purposeCreated', 'purposeDeleted', 'purposeUpdated',
  'queryCanceled', 'queryCreated', 'queryUpdated', 'removedFromProject', 'switchedCurrentProject', 'tagCreated',
  'tagDeleted', 'tagUpdated', 'taskDeleted', 'taskValidated', 'updatedModelInProject', 'userCloned', 'userCreated',
  'userDeleted', 'userDisabled', 'userEnabled', 'userMigrated', 'usernameUpdated', 'userUpdated',
];

describe('event names of interface part 6', () => {
  it('the table holds 72 names (a copy that lost a row would test less)', () => {
    expect(new Set(INTERFACE_EVENTS).size).toBe(72);
  });

  it('GET /webhooks/actions is ALL_NOTIFICATIONS plus exactly the names of part 6', async () => {
    const res = await h.call('GET', '/webhooks/actions', ADMIN);
    expect(res.status).toBe(200);
    expect(res.body[0]).toBe('ALL_NOTIFICATIONS');
    expect([...res.body].sort()).toEqual(['ALL_NOTIFICATIONS', ...INTERFACE_EVENTS].sort());
  });

  it('POST /webhooks takes a webhook subscribed to every one of them, and refuses a name not in part 6', async () => {
    const [made] = await createHooks(h, ADMIN, [hook('http://127.0.0.1:1/all', { name: 'all', global: true, notificationType: INTERFACE_EVENTS })]);
    expect((await h.call('GET', `/webhooks/${made.id}`, ADMIN)).body.notificationType).toEqual(INTERFACE_EVENTS);
    const res = await h.call('POST', '/webhooks', ADMIN, { webhooks: [hook('http://127.0.0.1:1/x', { notificationType: ['modelCreate'] })] });
    expect(res.body.createdWebhooks).toEqual([]);
    expect(res.body.errors[0]).toMatchObject({ statusCode: 400, message: expect.stringContaining('modelCreate') });
  });
});
