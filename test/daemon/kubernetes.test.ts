/** The Kubernetes example is consistent: sidecars share the volume, probes, ports, secrets. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { runGovops } from '../helpers/cli.js';

type Obj = Record<string, any>;
// YAML 1.1, as Kubernetes reads it (`0440` is octal there).
const load = (f: string): Obj[] => parseAllDocuments(readFileSync(`examples/kubernetes/${f}`, 'utf8'), { version: '1.1' }).map((d) => d.toJS() as Obj);

describe('examples/kubernetes', () => {
  const deployment = load('deployment.yaml').find((o) => o.kind === 'Deployment')!;
  const pod = deployment.spec.template.spec;
  const byName = (n: string) => pod.containers.find((c: Obj) => c.name === n);

  it('runs git-sync and govops as sidecars sharing one volume; govops watches the git-sync link', () => {
    const sync = byName('git-sync');
    const govops = byName('govops');
    expect(sync && govops).toBeTruthy();
    const shared = sync.volumeMounts.find((m: Obj) => pod.volumes.some((v: Obj) => v.name === m.name && v.emptyDir));
    const mine = govops.volumeMounts.find((m: Obj) => m.name === shared.name);
    expect(mine).toMatchObject({ readOnly: true });
    const root = sync.args.find((a: string) => a.startsWith('--root='))!.split('=')[1];
    const link = sync.args.find((a: string) => a.startsWith('--link='))!.split('=')[1];
    expect(root).toBe(shared.mountPath);
    const dir = govops.args.find((a: string) => a.startsWith('--dir='))!.split('=')[1];
    expect(dir.startsWith(`${mine.mountPath}/${link}`)).toBe(true);
    expect(govops.args[0]).toBe('run');
    // Read-only root filesystems: each container gets a writable /tmp (git-sync writes its gitconfig there).
    for (const c of [sync, govops]) {
      expect(c.securityContext.readOnlyRootFilesystem).toBe(true);
      const tmp = c.volumeMounts.find((m: Obj) => m.mountPath === '/tmp');
      expect(pod.volumes.find((v: Obj) => v.name === tmp?.name)?.emptyDir, `${c.name} /tmp`).toBeTruthy();
    }
    // git-sync v4 flags (v3's --branch/--wait/--dest are gone).
    for (const flag of ['--repo=', '--ref=', '--period=']) expect(sync.args.some((a: string) => a.startsWith(flag))).toBe(true);
    for (const flag of ['--branch=', '--wait=', '--dest=']) expect(sync.args.some((a: string) => a.startsWith(flag))).toBe(false);
    expect(deployment.spec.replicas).toBe(1);
  });

  it('probes /healthz and /readyz on the named metrics port, which the Service and ServiceMonitor use', () => {
    const govops = byName('govops');
    const port = govops.ports.find((p: Obj) => p.name === 'metrics');
    expect(port.containerPort).toBe(8080);
    expect(govops.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(govops.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    const svc = load('service.yaml')[0]!;
    expect(svc.spec.ports[0]).toMatchObject({ name: 'metrics', targetPort: 'metrics' });
    const sm = load('servicemonitor.yaml')[0]!;
    expect(sm.kind).toBe('ServiceMonitor');
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'metrics', path: '/metrics' });
    expect(sm.spec.selector.matchLabels).toEqual(svc.metadata.labels);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(30);
  });

  it('takes the token from a Secret, mounts manifest secrets as files, runs as non-root', () => {
    const govops = byName('govops');
    const secrets = load('secret.yaml');
    const token = govops.env.find((e: Obj) => e.name === 'GOVOPS_TOKEN').valueFrom.secretKeyRef;
    expect(secrets.find((s) => s.metadata.name === token.name)?.stringData).toHaveProperty(token.key);
    const vol = pod.volumes.find((v: Obj) => v.secret);
    const mount = govops.volumeMounts.find((m: Obj) => m.name === vol.name);
    expect(secrets.some((s) => s.metadata.name === vol.secret.secretName)).toBe(true);
    // Files are root-owned with group fsGroup: govops (uid 10001, gid fsGroup) reads them through the group bits.
    expect(vol.secret.defaultMode & 0o040).toBe(0o040);
    expect(pod.securityContext.fsGroup).toBe(pod.securityContext.runAsGroup);
    expect(mount.readOnly).toBe(true);
    const example = readFileSync('examples/kubernetes/manifest-with-file-secrets.yaml', 'utf8');
    // The mount is the secrets folder (GOVOPS_SECRETS_DIR); manifests name files relative to it.
    expect(govops.env.find((e: Obj) => e.name === 'GOVOPS_SECRETS_DIR')?.value).toBe(mount.mountPath);
    expect(example).toContain('fromFile: lakehouse-token');
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    for (const c of pod.containers) expect(c.securityContext.allowPrivilegeEscalation).toBe(false);
    const kustomize = load('kustomization.yaml')[0]!;
    for (const r of kustomize.resources) expect(() => readFileSync(`examples/kubernetes/${r}`)).not.toThrow();
  });

  it('its manifest example is valid, and the folder is ignored when examples/ is loaded', async () => {
    const one = await runGovops(['validate', 'examples/kubernetes/manifest-with-file-secrets.yaml']);
    expect(one.code, one.stdout + one.stderr).toBe(0);
    const all = await runGovops(['validate', 'examples', '-o', 'json']);
    expect(all.stdout + all.stderr).not.toContain('kubernetes/deployment.yaml');
  });
});
