/**
 * The offline preview (no service) of a credential rotation on a manual-flow integration: the plan lets an update of
 * credentials only through when the annotation acknowledges a script run for the configuration as it is
 * (src/plan/manual-steps.ts, decisions.md), so the comment must not say that merging waits for an edit script.
 */
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualStepToken } from '../../src/reconcile/manual-step-token.js';
import { runGovops } from '../helpers/cli.js';
import { git, manifestsBaseRepo } from '../helpers/git.js';

const CONFIG = { host: 'col.example.com', database: 'governance', authenticationType: 'userPassword', username: 'svc_col', password: { fromEnv: 'X' }, port: 5439 };
const col = (o: { passwordEnv: string; port?: number; ack: string }) => `apiVersion: govops/v1
kind: Integration
metadata:
  name: col
  annotations:
    govops/manual-step: "${o.ack}"
spec:
  type: columnar_warehouse
  autoBootstrap: false
  config:
    host: col.example.com
    database: governance
    authenticationType: userPassword
    username: svc_col
    password: { fromEnv: ${o.passwordEnv} }
    port: ${o.port ?? 5439}
`;

type Ack = { status: string; annotation?: string; reason?: string; steps?: number };

describe('govops preview offline: a credential rotation of an acknowledged manual-flow integration', () => {
  let repo: string;
  const created = `create:${manualStepToken('create', 'columnar_warehouse', CONFIG)}`;
  const previewAck = async (branch: string, text: string): Promise<Ack | undefined> => {
    git(repo, 'checkout', '-q', '-B', branch, 'main');
    await writeFile(path.join(repo, 'm', 'col.yaml'), text);
    git(repo, 'commit', '-q', '-am', branch);
    const r = await runGovops(['preview', 'm', '--base', 'main', '-o', 'json'], { cwd: repo, env: { GOVOPS_URL: undefined, GOVOPS_TOKEN: undefined } });
    expect([0, 2], r.stderr).toContain(r.code);
    const out = JSON.parse(r.stdout) as { resources: Array<{ name: string; manualAck?: Ack; manualSteps?: unknown[] }> };
    const col = out.resources.find((x) => x.name === 'col');
    return col?.manualAck && { ...col.manualAck, steps: col.manualSteps?.length ?? 0 };
  };

  beforeAll(async () => {
    repo = await manifestsBaseRepo('govops-rotation-');
    await writeFile(path.join(repo, 'm', 'col.yaml'), col({ passwordEnv: 'GOVOPS_SECRET_COL_PASSWORD', ack: created }));
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'col, created');
  });
  afterAll(() => rm(repo, { recursive: true, force: true }));

  it('only the password reference changes: acknowledged by the create entry, as the plan reads it', async () => {
    const ack = await previewAck('rotate', col({ passwordEnv: 'GOVOPS_SECRET_COL_PASSWORD_2', ack: created }));
    // and no edit script is listed to run (it read "run this script ... before the change is applied")
    expect(ack).toMatchObject({ status: 'acknowledged', annotation: `govops/manual-step: "${created}"`, steps: 0 });
  });

  it('a change of the configuration still waits for its edit script', async () => {
    const ack = await previewAck('port', col({ passwordEnv: 'GOVOPS_SECRET_COL_PASSWORD', port: 5440, ack: created }));
    expect(ack).toMatchObject({ status: 'awaiting', steps: 1 });
    expect(ack?.annotation).toMatch(/^govops\/manual-step: "edit:[0-9a-f]{8}"$/);
  });
});
