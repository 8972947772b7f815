/**
 * A kind's credential field is never shown as a value in a plan, whatever form the service's answer gives it: the
 * diff reports it as sensitive even when the live value is an object or a list where the manifest holds a string.
 */
import { describe, expect, it } from 'vitest';
import { planChanges } from '../../src/plan/planner.js';
import type { DesiredResource } from '../../src/plan/types.js';
import type { LiveIntegration } from '../../src/api/types.js';
import type { ManagedResource } from '../../src/state/types.js';
import { SHAPES, integration, liveOf, owned, stateWith } from '../plan/fixtures.js';

const plan = (desired: DesiredResource[], integrations: LiveIntegration[], resources: ManagedResource[]) =>
  planChanges({ shapes: SHAPES, desired, live: { integrations, webhooks: [] }, state: stateWith(...resources), options: { prune: false, allowReplace: false } });

const KEYFILE = '{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADAN-keyfile-canary\\n-----END PRIVATE KEY-----"}';

describe('a credential the service answers in another shape', () => {
  const d = integration('ds', 'dataset_warehouse', { role: 'r', datasetSuffix: '_secure', location: 'US', credential: KEYFILE }, { autoBootstrap: false });

  it.each([
    ['an object (the keyfile parsed, its key masked)', { type: 'service_account', private_key: '********' }],
    ['a list', ['********']],
  ])('dataset_warehouse credential answered as %s: the manifest\'s value is never in the change', (_name, shape) => {
    for (const resources of [[owned(d, '4')], []]) {
      const p = plan([d], [liveOf(d, '4', 'enabled', { credential: shape })], resources);
      const text = JSON.stringify(p.changes);
      expect(text).not.toContain('keyfile-canary');
      const changes = p.changes[0]!.changes.filter((c) => c.path === 'config.credential');
      for (const c of changes) expect(c).toMatchObject({ sensitive: true });
    }
  });
});
