/**
 * `kubectl kustomize examples/kubernetes` renders objects the Kubernetes API accepts: each is validated
 * offline against the Kubernetes OpenAPI schemas (kubernetes-models; ServiceMonitor from the Prometheus
 * Operator's CRD). Rendered with kubectl when it is installed; otherwise with a renderer of the subset of
 * kustomize the kustomization uses (resources only, in order), which refuses any other kustomization field.
 * Where kubectl is installed, both renderings are compared, so the fallback is checked against the real one.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Namespace, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

type Obj = Record<string, any>;
const DIR = 'examples/kubernetes';
// YAML 1.1, as Kubernetes reads it (`0440` is octal there).
const parse = (text: string): Obj[] =>
  parseAllDocuments(text, { version: '1.1' })
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);

/** The kustomize subset examples/kubernetes uses: `resources` (files), concatenated in order. */
function renderResourcesOnly(dir: string): Obj[] {
  const k = parse(readFileSync(join(dir, 'kustomization.yaml'), 'utf8'))[0]!;
  const supported = ['apiVersion', 'kind', 'resources'];
  const other = Object.keys(k).filter((key) => !supported.includes(key));
  if (other.length) throw new Error(`kustomization uses ${other.join(', ')}: install kubectl, or extend this renderer faithfully`);
  expect(k).toMatchObject({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization' });
  return (k.resources as string[]).flatMap((r) => parse(readFileSync(join(dir, r), 'utf8')));
}

function kubectlKustomize(dir: string): Obj[] | undefined {
  const res = spawnSync('kubectl', ['kustomize', dir], { encoding: 'utf8', timeout: 60_000 });
  if (res.error || res.status !== 0) {
    if (res.error && (res.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`kubectl kustomize ${dir} failed: ${res.stderr || String(res.error)}`);
  }
  return parse(res.stdout);
}

const MODELS: Record<string, { validate(o: Obj): void }> = {
  'v1/Namespace': { validate: (o) => new Namespace(o as any).validate() },
  'v1/Secret': { validate: (o) => new Secret(o as any).validate() },
  'v1/Service': { validate: (o) => new Service(o as any).validate() },
  'v1/PersistentVolumeClaim': { validate: (o) => new PersistentVolumeClaim(o as any).validate() },
  'apps/v1/Deployment': { validate: (o) => new Deployment(o as any).validate() },
  'monitoring.coreos.com/v1/ServiceMonitor': { validate: (o) => new ServiceMonitor(o as any).validate() },
};
const id = (o: Obj): string => `${o.apiVersion}/${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

const kubectl = kubectlKustomize(DIR);
const rendered = kubectl ?? renderResourcesOnly(DIR);

describe('examples/kubernetes rendered by kustomize', () => {
  it(`renders every resource (${kubectl ? 'kubectl kustomize' : 'resources-only renderer: kubectl not installed'})`, () => {
    expect(rendered.map((o) => `${o.kind}/${o.metadata?.name}`).sort()).toEqual([
      'Deployment/govops',
      'Namespace/govops',
      'PersistentVolumeClaim/govops-state',
      'Secret/git-credentials',
      'Secret/govops-api',
      'Secret/govops-manifest-secrets',
      'Service/govops',
      'ServiceMonitor/govops',
    ]);
    if (kubectl) {
      // The fallback renderer gives the same objects as kubectl here (kubectl may order them differently).
      const sorted = (list: Obj[]) => [...list].sort((a, b) => id(a).localeCompare(id(b)));
      expect(sorted(renderResourcesOnly(DIR))).toEqual(sorted(kubectl));
    }
  });

  it.each(rendered.map((o) => [`${o.kind}/${o.metadata?.name}`, o] as const))('%s is valid against its Kubernetes schema', (_name, obj) => {
    const model = MODELS[`${obj.apiVersion}/${obj.kind}`];
    expect(model, `no schema for ${obj.apiVersion} ${obj.kind}: add its model`).toBeDefined();
    expect(() => model!.validate(obj)).not.toThrow();
  });

  it('the validation rejects a broken object (it is not a no-op)', () => {
    const deployment = structuredClone(rendered.find((o) => o.kind === 'Deployment')!);
    deployment.spec.template.spec.containers[0].ports = [{ containerPort: 'http' }];
    expect(() => MODELS['apps/v1/Deployment']!.validate(deployment)).toThrow(/containerPort must be integer/);
    const monitor = structuredClone(rendered.find((o) => o.kind === 'ServiceMonitor')!);
    delete monitor.spec.selector;
    expect(() => MODELS['monitoring.coreos.com/v1/ServiceMonitor']!.validate(monitor)).toThrow(/selector/);
  });

  it('the pod gets no service account token, and git-sync is a v4 release no older than v4.7.1', () => {
    const pod = rendered.find((o) => o.kind === 'Deployment')!.spec.template.spec;
    expect(pod.automountServiceAccountToken).toBe(false);
    const image = pod.containers.find((c: Obj) => c.name === 'git-sync').image as string;
    const m = /^registry\.k8s\.io\/git-sync\/git-sync:v4\.(\d+)\.(\d+)$/.exec(image);
    expect(m, image).not.toBeNull();
    expect(Number(m![1]) * 1000 + Number(m![2])).toBeGreaterThanOrEqual(7001);
  });

  it('no container is exposed for push notifications: the git-sync layout is triggered by the directory watch', () => {
    const text = ['deployment.yaml', 'service.yaml'].map((f) => readFileSync(join(DIR, f), 'utf8')).join('\n');
    expect(text).not.toMatch(/route .*\/hooks\/git|Ingress path/i);
    const govops = rendered.find((o) => o.kind === 'Deployment')!.spec.template.spec.containers.find((c: Obj) => c.name === 'govops');
    expect(govops.args.some((a: string) => a.startsWith('--dir='))).toBe(true);
  });
});
