/** lakehouse (interface 2.5): a lakehouse workspace, keyed by the host of its workspace URL. */
import { hostOf } from '../../service/kinds.js';
import { defineKind } from '../kind.js';

export const lakehouse = defineKind({
  type: 'lakehouse',
  configSchema: 'config/lakehouse.json',
  identity: (c) => `workspace=${hostOf(c.workspaceUrl)}`,
  naturalKeyFields: ['workspaceUrl'],
  identityField: ['spec', 'config', 'workspaceUrl'],
  masked: ['token'],
  nonEditable: ['type', 'autoBootstrap', 'config.workspaceUrl', 'config.catalog'],
  requiredCredentials: () => [['token']],
  scripts: ['create', 'edit'],
  // 2.5: "Changing the groupPattern.deny group requires all policies to be pushed again to the cluster."
  followUps: { 'groupPattern.deny': 'all data policies must be pushed again to the cluster (interface 2.5), or the group they exempt stays the old one' },
});
