/**
 * The Kubernetes examples docs/deploy.md describes (examples/kubernetes, examples/kubernetes-ha) run the daemon the
 * image builds: the govops container's arguments are options of `govops run`, its variables are ones govops reads,
 * the probes and the Service reach the endpoints on the port `--listen` gives, and the pod runs as the image's
 * non-root user with a read-only root filesystem and a writable /tmp, as the page says. The schemas of the objects
 * are checked apart (test/daemon/kubernetes-schema.test.ts, kubernetes-ha.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildProgram } from '../../src/cli/program.js';
import { join } from 'node:path';
import { parseDuration } from '../../src/util/duration.js';
import { read, sources } from './repo-files.js';

type Obj = Record<string, any>;
const load = (dir: string): Obj[] => {
  const k = parseAllDocuments(read(`${dir}/kustomization.yaml`), { version: '1.1' })[0]!.toJS() as Obj;
  return (k.resources as string[]).flatMap((f) => parseAllDocuments(read(`${dir}/${f}`), { version: '1.1' }).map((d) => d.toJS() as Obj));
};

const SRC = sources('src').join('\n');

const dockerfile = read('Dockerfile');
const imageUser = /^USER (\d+):(\d+)$/m.exec(dockerfile);

const run = buildProgram().commands.find((c) => c.name() === 'run')!;

/** The value of `--flag=value` / `--flag value` in an argument list, else the option's default. */
function argValue(args: string[], flag: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`${flag}=`)) return args[i]!.slice(flag.length + 1);
    if (args[i] === flag) return args[i + 1];
  }
  const o = run.options.find((x) => x.long === flag);
  return o?.defaultValue === undefined ? undefined : String(o.defaultValue);
}

/**
 * Where the container's state is: --state, else GOVOPS_STATE_URL (PostgreSQL), else GOVOPS_STATE, else the default
 * path in the image's working folder (on the root filesystem unless a volume is mounted there).
 */
function stateOf(container: Obj): string {
  const args = container.args as string[];
  const env = new Map(((container.env ?? []) as Obj[]).map((e) => [e.name as string, e]));
  const joined = args.find((a) => a.startsWith('--state='));
  if (joined) return joined.slice('--state='.length);
  if (args.includes('--state')) return args[args.indexOf('--state') + 1]!;
  if (env.has('GOVOPS_STATE_URL')) return 'postgres://';
  if (env.has('GOVOPS_STATE')) return env.get('GOVOPS_STATE')!.value as string;
  const workingDir = /^WORKDIR (\S+)$/m.exec(dockerfile.slice(dockerfile.lastIndexOf('FROM ')))![1]!;
  return join(workingDir, String(run.options.find((o) => o.long === '--state')!.defaultValue));
}

describe.each(['examples/kubernetes', 'examples/kubernetes-ha'])('%s runs the daemon as docs/deploy.md says', (dir) => {
  const objects = load(dir);
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  const pod = deployment.spec.template.spec as Obj;
  const govops = (pod.containers as Obj[]).find((c) => c.name === 'govops')!;
  const args = govops.args as string[];

  it('the govops container runs `govops run` with options it has', () => {
    expect(govops.command).toBeUndefined(); // the image's entrypoint: tini -- govops
    expect(args[0]).toBe('run');
    const parsed = run.parseOptions(args.slice(1));
    expect(parsed.unknown, 'options govops run does not have').toEqual([]);
    expect(parsed.operands, 'govops run takes no operands').toEqual([]);
    for (const flag of ['--resync', '--grace', '--interval']) {
      const v = argValue(args, flag);
      if (v !== undefined) expect(() => parseDuration(v), `${flag}=${v}`).not.toThrow();
    }
  });

  it('each variable it sets is one govops reads (or a manifest secret under the default prefix)', () => {
    const names = ((govops.env ?? []) as Obj[]).map((e) => e.name as string);
    expect(names).toContain('GOVOPS_URL');
    expect(names).toContain('GOVOPS_TOKEN');
    const unread = names.filter((n) => !n.startsWith('GOVOPS_SECRET_') || n === 'GOVOPS_SECRET_ENV_PREFIX').filter((n) => !new RegExp(`(['"\`])${n}\\1|env\\.${n}\\b`).test(SRC));
    expect(unread).toEqual([]);
  });

  it('the probes and the Service reach /healthz and /readyz on the port --listen gives', () => {
    const listen = argValue(args, '--listen') ?? (govops.env as Obj[] | undefined)?.find((e) => e.name === 'GOVOPS_LISTEN')?.value;
    const port = Number(/:(\d+)$/.exec(listen as string)![1]);
    const named = (govops.ports as Obj[]).find((p) => p.containerPort === port);
    expect(named, `a container port ${port}`).toBeDefined();
    const probePort = (p: Obj): unknown => p.httpGet.port;
    expect(govops.livenessProbe.httpGet.path).toBe('/healthz');
    expect(govops.startupProbe.httpGet.path).toBe('/healthz');
    expect(govops.readinessProbe.httpGet.path).toBe('/readyz');
    for (const probe of [govops.livenessProbe, govops.startupProbe, govops.readinessProbe]) expect([named!.name, port]).toContain(probePort(probe));
    const service = objects.find((o) => o.kind === 'Service')!;
    expect((service.spec.ports as Obj[]).map((p) => p.targetPort)).toContain(named!.name);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    if (monitor) {
      const servicePortNames = (service.spec.ports as Obj[]).map((p) => p.name);
      for (const e of monitor.spec.endpoints as Obj[]) {
        expect(servicePortNames).toContain(e.port);
        expect(e.path).toBe('/metrics');
      }
    }
  });

  it("runs as the image's non-root user, read-only root filesystem, no privilege, a writable /tmp per container", () => {
    expect(imageUser, 'Dockerfile USER uid:gid').not.toBeNull();
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    expect(pod.securityContext.runAsUser).toBe(Number(imageUser![1]));
    expect(pod.securityContext.runAsGroup).toBe(Number(imageUser![2]));
    const emptyDirs = new Set((pod.volumes as Obj[]).filter((v) => v.emptyDir).map((v) => v.name as string));
    for (const c of pod.containers as Obj[]) {
      expect(c.securityContext, c.name).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
      const tmp = (c.volumeMounts as Obj[]).find((m) => m.mountPath === '/tmp');
      expect(tmp && emptyDirs.has(tmp.name), `${c.name}: an emptyDir at /tmp`).toBe(true);
    }
    // every folder govops writes (the state file's, the work folder) is a volume, not the read-only root
    const mounts = (govops.volumeMounts as Obj[]).filter((m) => !m.readOnly).map((m) => m.mountPath as string);
    const state = stateOf(govops);
    const workdir = argValue(args, '--workdir');
    if (state && !/^postgres(ql)?:/.test(state)) expect(mounts.some((m) => state.startsWith(`${m}/`)), `--state ${state}`).toBe(true);
    if (workdir) expect(mounts.some((m) => workdir === m || workdir.startsWith(`${m}/`)), `--workdir ${workdir}`).toBe(true);
    else expect(state && !/^postgres(ql)?:/.test(state), 'without --workdir the work folder is beside a state file').toBe(true);
  });

  it('the pod has more time to stop than --grace', () => {
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(parseDuration(argValue(args, '--grace')!));
  });
});

describe('examples/kubernetes: git-sync and govops share the checkout', () => {
  it("govops watches a folder under git-sync's --root/--link, mounted in both containers", () => {
    const pod = load('examples/kubernetes').find((o) => o.kind === 'Deployment')!.spec.template.spec as Obj;
    const sync = (pod.containers as Obj[]).find((c) => c.name === 'git-sync')!;
    const govops = (pod.containers as Obj[]).find((c) => c.name === 'govops')!;
    const flag = (args: string[], name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    const root = flag(sync.args, 'root')!;
    const link = flag(sync.args, 'link')!;
    expect(flag(govops.args, 'dir')!.startsWith(`${root}/${link}/`)).toBe(true);
    const mountOf = (c: Obj): string | undefined => (c.volumeMounts as Obj[]).find((m) => m.mountPath === root)?.name;
    expect(mountOf(sync)).toBeDefined();
    expect(mountOf(govops)).toBe(mountOf(sync));
  });
});

describe("examples/kubernetes-ha: the state URL's TLS settings mean with govops' driver what they say", () => {
  // node-postgres (pg-connection-string 2.x) reads sslmode=prefer, require and verify-ca as verify-full, printing a
  // "SECURITY WARNING" on stderr: the server's certificate is checked against Node's CA list, which the CA of an
  // in-cluster PostgreSQL is not in ("self-signed certificate", GOVOPS_STATE_REFUSED). libpq's `require` does not check.
  const objects = load('examples/kubernetes-ha');
  const pod = objects.find((o) => o.kind === 'Deployment')!.spec.template.spec as Obj;
  const govops = (pod.containers as Obj[]).find((c) => c.name === 'govops')!;
  const ref = ((govops.env ?? []) as Obj[]).find((e) => e.name === 'GOVOPS_STATE_URL')!.valueFrom.secretKeyRef as Obj;
  const secret = objects.find((o) => o.kind === 'Secret' && o.metadata.name === ref.name)!;
  const url = new URL(secret.stringData[ref.key] as string);

  it('no sslmode the driver reads differently from libpq (prefer, require, verify-ca) unless uselibpqcompat=true', () => {
    const mode = url.searchParams.get('sslmode');
    if (url.searchParams.get('uselibpqcompat') !== 'true') expect(['prefer', 'require', 'verify-ca'], `sslmode=${mode}`).not.toContain(mode);
  });

  it('a certificate check names the CA (sslrootcert), a file the govops container mounts from a key the examples create', () => {
    if (url.searchParams.get('sslmode') !== 'verify-full') return;
    const ca = url.searchParams.get('sslrootcert');
    expect(ca, 'sslrootcert: the CA that signed the server certificate').toBeTruthy();
    const mount = ((govops.volumeMounts ?? []) as Obj[]).find((m) => ca!.startsWith(`${m.mountPath}/`));
    expect(mount, `a volume mounted above ${ca}`).toBeDefined();
    const volume = (pod.volumes as Obj[]).find((v) => v.name === mount!.name)!;
    const file = ca!.slice(mount!.mountPath.length + 1);
    const source = objects.find((o) => o.kind === 'Secret' && o.metadata.name === volume.secret?.secretName)!;
    expect(source, `the Secret ${volume.secret?.secretName}`).toBeDefined();
    const key = ((volume.secret.items ?? []) as Obj[]).find((i) => i.path === file)?.key ?? file;
    expect(Object.keys(source.stringData ?? source.data ?? {})).toContain(key);
  });
});

describe('examples/kubernetes-ha: the disruption budget', () => {
  it('does not hold a node drain while every replica is unready (/readyz 503 while the service or the database is unreachable)', () => {
    // With the default policy (IfHealthyBudget) an unready pod is evicted only while the budget is met: during an
    // outage of the service both replicas are unready, minAvailable 1 is not met, and `kubectl drain` retries forever.
    const pdb = load('examples/kubernetes-ha').find((o) => o.kind === 'PodDisruptionBudget')!;
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
  });
});

describe('examples/kubernetes: the `kubectl create secret` commands its secret.yaml suggests', () => {
  it('create every key the Deployment reads from those Secrets (a key missing: the pod never starts, CreateContainerConfigError)', () => {
    const text = read('examples/kubernetes/secret.yaml');
    // the commented commands, continuation lines joined
    const commands = text
      .split('\n')
      .filter((l) => l.startsWith('#'))
      .map((l) => l.replace(/^#\s?/, ''))
      .join('\n')
      .replace(/\\\n\s*/g, ' ')
      .split('\n')
      .filter((l) => /kubectl .*create secret generic /.test(l));
    expect(commands.length).toBeGreaterThan(0);
    const created = new Map<string, Set<string>>();
    for (const c of commands) {
      const name = /create secret generic (\S+)/.exec(c)![1]!;
      const keys = [...c.matchAll(/--from-(?:literal|file)=([^=\s]+)=/g)].map((m) => m[1]!);
      created.set(name, new Set(keys));
    }
    const pod = load('examples/kubernetes').find((o) => o.kind === 'Deployment')!.spec.template.spec as Obj;
    for (const c of pod.containers as Obj[]) {
      for (const e of (c.env ?? []) as Obj[]) {
        const ref = e.valueFrom?.secretKeyRef as Obj | undefined;
        if (!ref || ref.optional || !created.has(ref.name)) continue;
        expect([...created.get(ref.name)!], `${c.name} reads ${ref.name}/${ref.key}`).toContain(ref.key);
      }
    }
  });
});
