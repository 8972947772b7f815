/**
 * Issue 22: redaction applies to values in text leaving the process, never to keys or to data govops reads back.
 * A secret `cred` (4 characters, the redaction minimum) used to turn the fingerprint key `config.credential` in
 * the state file into `config.[redacted]ential`: every dataset_warehouse integration planned a credential update
 * on every run.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { secretRedactor } from '../../src/util/redact.js';
import { rig, type Rig } from '../apply/inproc.js';

const manifest = `apiVersion: govops/v1
kind: Integration
metadata:
  name: datasets
spec:
  type: dataset_warehouse
  autoBootstrap: false
  config:
    role: govops-connector@project.example.com
    datasetSuffix: _secure
    location: US
    credential: { fromEnv: GOVOPS_SECRET_DW_CREDENTIAL }
`;

describe('a secret whose value is a part of a state key', () => {
  let r: Rig;
  beforeAll(async () => {
    r = await rig();
    r.env.GOVOPS_SECRET_DW_CREDENTIAL = 'cred';
    await r.write('datasets.yaml', manifest);
  });
  afterAll(async () => {
    await r.close();
  });

  it('keeps the state file as written, and a no-op apply after it sends only the 2 list requests', async () => {
    const first = await r.run({ manualSteps: 'trust' });
    expect(first.error, JSON.stringify(first.outcomes)).toBeUndefined();
    expect(secretRedactor.redactText('cred')).not.toBe('cred'); // the secret is in force for every output
    const before = r.sandbox.requests().length;
    const again = await r.run({ manualSteps: 'trust' });
    expect(again.plan?.changes.map((c) => `${c.name}:${c.action}`)).toEqual(['datasets:noop']);
    expect(r.sandbox.requests().slice(before).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /integrations', 'GET /webhooks']);

    const text = await readFile(r.statePath, 'utf8');
    expect(text).toContain('"config.credential"');
    expect(text).not.toContain('[redacted]');
    const entry = (await r.state()).resources.find((x) => x.name === 'datasets')!;
    expect(Object.keys(entry.secretFingerprints)).toEqual(['config.credential']);
  });
});
