/**
 * examples/kubernetes-ha: every object validates against the Kubernetes OpenAPI schemas (kubernetes-models),
 * the Deployment runs two replicas with the state URL from the Secret and a per-pod identity, and a
 * PodDisruptionBudget keeps one of them through a drain.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';

type Obj = Record<string, any>;
const DIR = 'examples/kubernetes-ha';
const load = (f: string): Obj[] => parseAllDocuments(readFileSync(`${DIR}/${f}`, 'utf8'), { version: '1.1' }).map((d) => d.toJS() as Obj);

describe('examples/kubernetes-ha', () => {
  const kustomize = load('kustomization.yaml')[0]!;
  const all = (kustomize.resources as string[]).flatMap(load);

  it('validates against the Kubernetes schemas', () => {
    const models: Record<string, new (o: Obj) => { validate(): void }> = { Deployment, Secret, Service, PodDisruptionBudget };
    for (const o of all) {
      const M = models[o.kind];
      expect(M, o.kind).toBeDefined();
      expect(() => new M!(o).validate()).not.toThrow();
    }
  });

  it('two replicas, the state URL from the Secret, an identity per pod, a disruption budget of one', () => {
    const d = all.find((o) => o.kind === 'Deployment')!;
    expect(d.spec.replicas).toBe(2);
    const c = d.spec.template.spec.containers[0];
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e]));
    expect(env.GOVOPS_STATE_URL.valueFrom.secretKeyRef).toEqual({ name: 'govops-ha', key: 'GOVOPS_STATE_URL' });
    expect(env.GOVOPS_IDENTITY.valueFrom.fieldRef.fieldPath).toBe('metadata.name');
    expect(c.args.join(' ')).not.toMatch(/--state[= ]/); // never on a command line
    const secret = all.find((o) => o.kind === 'Secret')!;
    expect(secret.stringData.GOVOPS_STATE_URL).toMatch(/^postgres:\/\//);
    const pdb = all.find((o) => o.kind === 'PodDisruptionBudget')!;
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(d.spec.selector.matchLabels);
  });
});
