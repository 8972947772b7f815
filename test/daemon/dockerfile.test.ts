/** The Dockerfile's key properties, read from it (`npm run test:image` builds and runs the image; it needs root and podman). */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';

const text = readFileSync('Dockerfile', 'utf8').replace(/\\\n/g, ' ');
const lines = text.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
const stages: string[][] = [];
for (const l of lines) {
  if (/^FROM\s/i.test(l)) stages.push([]);
  stages.at(-1)?.push(l);
}
const runtime = stages.at(-1) ?? [];
const find = (stage: string[], re: RegExp) => stage.filter((l) => re.test(l));

const stage = (name: string) => stages.find((s) => new RegExp(`\\sAS ${name}$`).test(s[0]!)) ?? [];

describe('Dockerfile', () => {
  it('is multi-stage on a current Node LTS slim base; the runtime is an empty image plus the OS and /app stages', () => {
    expect(stages.length).toBeGreaterThanOrEqual(4);
    const arg = /ARG NODE_VERSION=(\d+)/.exec(text)?.[1];
    // An LTS line (even major) no older than the Active LTS when this was written (26, since 2026-10-28).
    expect(Number(arg)).toBeGreaterThanOrEqual(26);
    expect(Number(arg) % 2).toBe(0);
    for (const s of stages.slice(0, -1)) expect(s[0]).toMatch(/^FROM node:\$\{NODE_VERSION\}-\w+-slim AS \w+$/);
    expect(find(stage('build'), /^RUN npm ci\b/)).toHaveLength(1);
    expect(find(stage('build'), /^RUN npm run build/)).toHaveLength(1);
    expect(find(stage('app'), /^COPY --from=build \/app\/dist /)).toHaveLength(1);
    // Only the two assembled parts reach the runtime image: no lower layer carries what was removed.
    expect(runtime[0]).toBe('FROM scratch AS runtime');
    expect(find(runtime, /^(COPY|ADD|RUN)\s/)).toEqual(['COPY --from=rootfs / /', 'COPY --from=app /app /app']);
  });

  it('installs production dependencies only (without the building prepare script), git, CA certificates, openssh-client and tini, and drops npm and apt caches', () => {
    const ci = find(stage('app'), /npm ci/).join(' ');
    expect(ci).toMatch(/--omit=dev/);
    expect(ci).toMatch(/--ignore-scripts/);
    const rootfs = stage('rootfs').join(' ');
    const apt = /apt-get install[^&]*/.exec(rootfs)?.[0] ?? '';
    for (const pkg of ['git', 'ca-certificates', 'tini', 'openssh-client']) expect(apt).toMatch(new RegExp(`\\b${pkg}\\b`));
    for (const gone of ['/usr/local/lib/node_modules', '/usr/local/bin/npm', '/var/lib/apt/lists/*', '/var/cache/apt/*']) expect(rootfs).toContain(gone);
  });

  it('runs as a non-root user, with a HEALTHCHECK through `govops healthcheck` and govops run as entrypoint/command', () => {
    const users = find(runtime, /^USER\s/);
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.split(/\s+/)[1]!.split(':')[0]!;
    expect(['root', '0']).not.toContain(user);
    const hc = find(runtime, /^HEALTHCHECK\s/);
    expect(hc).toHaveLength(1);
    expect(JSON.parse(hc[0]!.replace(/^.*\sCMD\s+/, ''))).toEqual(['govops', 'healthcheck']);
    const entry = find(runtime, /^ENTRYPOINT\s/).at(-1)!;
    expect(JSON.parse(entry.replace(/^ENTRYPOINT\s+/, ''))).toEqual(['tini', '--', 'govops']);
    expect(JSON.parse(find(runtime, /^CMD\s/).at(-1)!.replace(/^CMD\s+/, ''))).toEqual(['run']);
    expect(find(runtime, /^EXPOSE 8080/)).toHaveLength(1);
    // the govops command is package.json's bin (dist/cli/govops.cjs), made executable in the app stage
    const bin = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { bin: { govops: string } }).bin.govops;
    expect(stage('rootfs').join(' ')).toContain(`ln -s /app/${bin} /usr/local/bin/govops`);
    expect(stage('app').join(' ')).toContain(`chmod 0755 ${bin}`);
  });

  it('copies only what exists, and .dockerignore keeps local artefacts out of the context', () => {
    for (const l of lines.filter((x) => /^COPY\s/.test(x) && !x.includes('--from'))) {
      const parts = l.split(/\s+/).slice(1, -1);
      for (const p of parts) expect(existsSync(p), `${p} (in "${l}")`).toBe(true);
    }
    const ignore = readFileSync('.dockerignore', 'utf8').split('\n').map((s) => s.trim());
    for (const p of ['.git', 'node_modules', 'dist', '.govops']) expect(ignore).toContain(p);
    for (const p of ['src', 'schemas', 'examples', 'package.json', 'package-lock.json']) expect(ignore).not.toContain(p);
  });

  it('the entrypoint binary exists after the build and runs `run --help` and `healthcheck --help`', async () => {
    const { runGovops } = await import('../helpers/cli.js');
    const res = await runGovops(['run', '--help']);
    expect(res.code).toBe(0);
    for (const flag of ['--repo', '--dir', '--self-heal', '--listen', '--git-webhook-secret', '--grace', '--max-deletes', '--url']) {
      expect(res.stdout).toContain(flag);
    }
    const hc = await runGovops(['healthcheck', '--help']);
    expect(hc.code).toBe(0);
    expect(hc.stdout).toContain('--listen');
  });
});
