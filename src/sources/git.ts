/**
 * Git source: a bare cache repo in `<workdir>/repo.git`, shallow (the branch tip alone), fetched on an interval (±10% jitter) and
 * on `refresh()`. Each new commit of `origin/<branch>` is checked out (detached) into its own
 * worktree `<workdir>/revs/<sha>`, kept until `retain` drops it. The URL is never logged with
 * credentials; HTTPS tokens come from GOVOPS_GIT_TOKEN through a GIT_ASKPASS script (the token
 * itself is never written to disk nor put on a command line). Every command goes through the one
 * Git adapter (src/util/git.ts: environment allow-list, no hooks, timeout, redacted stderr).
 *
 * What the repository's authors write reaches neither a program nor the token:
 * - the cache's `info/attributes` is `* -filter` (it overrides every .gitattributes of a commit): no filter
 *   driver configured on the host (git-lfs, installed system-wide by Debian's package) runs on a checkout,
 *   whatever its name, so no `.lfsconfig` of theirs names a server that git-lfs would ask for credentials;
 * - the token and the ask-pass script are in the environment of `git fetch` only (the one command that talks
 *   to the remote), with the operator's credential helpers off for it (none is asked first, none stores the
 *   token); the script answers a prompt for the configured remote's host only (not a host it redirects to).
 */
import { access, chmod, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { Git, DEFAULT_GIT_TIMEOUT_MS } from '../util/git.js';
import { registerSecrets } from '../util/redact.js';
import { ensureDir } from '../util/fs.js';
import { markWorkdir } from '../util/own-files.js';
import { WORK_DIR, nextRevisionOrder, type Revision, type Source, type SourceDescription, type SourceMetricsHooks } from './types.js';
import { redactText, redactUrl } from './redact.js';
import { jittered } from './timer.js';
import { CoalescingRunner } from './serial.js';
import { HealthTracker, type SourceHealth } from './health.js';

export interface GitSourceOptions {
  url: string;
  branch?: string;
  /** Manifest folder inside the repository (default '.'). */
  path?: string;
  workdir: string;
  intervalMs: number;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
  hooks?: SourceMetricsHooks & {
    /** Called after a revision's folder is checked out, before the revision is published (diagnostics, tests). */
    afterCheckout?(dir: string): Promise<void>;
  };
  /** Per git command timeout (default 120s). */
  commandTimeoutMs?: number;
}

/**
 * git calls it with a prompt such as `Password for 'https://user@host:port': ` (LC_ALL=C). The host between the
 * last `@` and the first `/` after the scheme must be the configured remote's, as written in its URL.
 */
const ASKPASS = `#!/bin/sh
# govops: answers git's credential prompts for the configured remote's host (GOVOPS_GIT_HOST) from the
# environment, and nothing else (never stores the token).
url=\${1#*\\'}
url=\${url%\\'*}
host=\${url#*://}
host=\${host##*@}
host=\${host%%/*}
[ -n "$GOVOPS_GIT_HOST" ] && [ "$host" = "$GOVOPS_GIT_HOST" ] || exit 1
case "$1" in
  Username\\ for\\ *) printf '%s\\n' "\${GOVOPS_GIT_USERNAME:-x-access-token}" ;;
  Password\\ for\\ *) printf '%s\\n' "$GOVOPS_GIT_TOKEN" ;;
  *) exit 1 ;;
esac
`;

/** Every filter attribute unset, for every path: overrides the .gitattributes of any commit (highest precedence). */
const INFO_ATTRIBUTES = '# govops: no filter driver runs on a checkout, whatever the repository selects\n* -filter\n';

/** `host[:port]` of a URL with a scheme, as git's credential prompts show it; undefined for scp-like and local remotes. */
export function remoteHost(url: string): string | undefined {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)/.exec(url)?.[1];
  if (authority === undefined) return undefined;
  return authority.slice(authority.lastIndexOf('@') + 1) || undefined;
}

export class GitSource implements Source {
  private readonly branch: string;
  private readonly path: string;
  private readonly workdir: string;
  private readonly repoDir: string;
  private readonly revsDir: string;
  private readonly env: NodeJS.ProcessEnv;
  private git?: Git;
  /** What `git fetch` alone gets: the ask-pass script, the token, the host it answers for. */
  private auth: { extraEnv: Record<string, string>; config: Array<[string, string]> } = { extraEnv: {}, config: [] };
  private listeners: Array<(r: Revision) => void> = [];
  private latest?: Revision;
  private readonly runner = new CoalescingRunner(() => this.poll());
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private lastError?: string;
  private readonly tracker = new HealthTracker();
  /**
   * Revision folders whose `worktree add` finished in this process (start() clears the folder). A folder with a
   * `.git` but not listed here is one whose checkout was cut short (the command killed at its timeout): it is
   * checked out again, never published with files missing.
   */
  private readonly complete = new Set<string>();
  /** Kills a running git command on stop(). */
  private readonly abort = new AbortController();

  constructor(private readonly opts: GitSourceOptions) {
    this.branch = opts.branch ?? 'main';
    this.path = opts.path ?? '.';
    this.workdir = resolve(opts.workdir);
    this.repoDir = join(this.workdir, 'repo.git');
    this.revsDir = join(this.workdir, 'revs');
    this.env = opts.env ?? process.env;
  }

  describe(): SourceDescription {
    return { type: 'git', location: redactUrl(this.opts.url), branch: this.branch, path: this.path };
  }

  onRevision(cb: (revision: Revision) => void): void {
    this.listeners.push(cb);
  }

  current(): Revision | undefined {
    return this.latest;
  }

  /** The last fetch error (redacted), if the last fetch failed. */
  error(): string | undefined {
    return this.lastError;
  }

  health(): SourceHealth {
    return this.tracker.snapshot();
  }

  async start(): Promise<void> {
    await ensureDir(this.repoDir, WORK_DIR);
    await markWorkdir(this.workdir);
    const token = this.env.GOVOPS_GIT_TOKEN;
    if (token) {
      registerSecrets(token);
      const askpass = join(this.workdir, 'askpass.sh');
      await writeFile(askpass, ASKPASS, { mode: 0o700 });
      await chmod(askpass, 0o700); // an existing file keeps its mode through writeFile
      const extraEnv: Record<string, string> = { GIT_ASKPASS: askpass, GOVOPS_GIT_TOKEN: token, GOVOPS_GIT_HOST: remoteHost(this.opts.url) ?? '' };
      if (this.env.GOVOPS_GIT_USERNAME) extraEnv.GOVOPS_GIT_USERNAME = this.env.GOVOPS_GIT_USERNAME;
      // An empty helper resets the list: no helper of the operator's configuration is asked or told the token.
      this.auth = { extraEnv, config: [['credential.helper', '']] };
    }
    this.git = new Git({
      cwd: this.repoDir,
      env: this.env,
      timeoutMs: this.opts.commandTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
      signal: this.abort.signal,
    });
    const fresh = !(await exists(join(this.repoDir, 'HEAD')));
    if (fresh) await this.git.raw(['init', '--bare', '--quiet']);
    // Written at every start (a cache made by an older govops, an operator's init template): see INFO_ATTRIBUTES.
    await ensureDir(join(this.repoDir, 'info'), WORK_DIR);
    await writeFile(join(this.repoDir, 'info', 'attributes'), INFO_ATTRIBUTES, { mode: 0o600 });
    const remotes = (await this.git.raw(['remote'])).split('\n').map((r) => r.trim());
    if (remotes.includes('origin')) await this.git.raw(['remote', 'set-url', 'origin', this.opts.url]);
    else await this.git.raw(['remote', 'add', 'origin', this.opts.url]);
    // Worktrees from a previous run are stale: start clean.
    await rm(this.revsDir, { recursive: true, force: true });
    await this.git.raw(['worktree', 'prune']);
    await ensureDir(this.revsDir, WORK_DIR);
    await this.refresh();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await this.runner.settled();
  }

  refresh(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return this.runner.run();
  }

  /** Drop revision folders no longer needed; serialised with fetch + checkout (never removes a folder being published). */
  retain(ids: Iterable<string>): Promise<void> {
    const keep = new Set(ids);
    return this.runner.exclusive(() => this.dropFolders(keep));
  }

  private async dropFolders(keep: Set<string>): Promise<void> {
    if (this.latest) keep.add(this.latest.id);
    const git = this.git;
    if (!git) return;
    const entries = await readdir(this.revsDir).catch(() => [] as string[]);
    for (const name of entries) {
      if (keep.has(name)) continue;
      this.complete.delete(name);
      await rm(join(this.revsDir, name), { recursive: true, force: true });
    }
    await git.raw(['worktree', 'prune']).catch(() => undefined);
  }

  private async poll(): Promise<void> {
    if (this.stopped || !this.git) return;
    const git = this.git;
    const started = process.hrtime.bigint();
    let ok = false;
    try {
      const ref = `refs/remotes/origin/${this.branch}`;
      await this.dropStaleLocks(ref);
      // The tip alone (`--depth 1`, as Flux's GitRepository): govops reads one commit's tree, never history, so a
      // repository with years of it costs its first fetch and the cache on disk only the tree in force. A new commit
      // or a force-push (to a commit never fetched too) is fetched the same way.
      await git.raw(['fetch', '--depth', '1', '--prune', '--no-tags', '--no-recurse-submodules', 'origin', `+refs/heads/${this.branch}:${ref}`], this.auth);
      const sha = (await git.raw(['rev-parse', '--verify', `${ref}^{commit}`])).trim();
      ok = true;
      if (this.lastError) this.opts.logger.info({ source: this.describe() }, 'git fetch recovered');
      this.lastError = undefined;
      this.tracker.succeeded(new Date());
      // A new commit, or the current one's folder is gone or incomplete (an I/O failure): check it out (again).
      if (sha !== this.latest?.id || !(await exists(join(this.revsDir, sha, '.git')))) await this.checkout(sha);
    } catch (err) {
      // (a checkout that failed after a good fetch too: the revision is not available, and the failure counted)
      ok = false;
      if (this.stopped) return;
      const message = redactText(err instanceof Error ? err.message : String(err));
      this.lastError = message.trim() || 'git fetch failed';
      // A checkout that failed after a good fetch is reported the same way: the revision is not available.
      this.tracker.failed(new Date(), this.lastError);
      this.opts.logger.error(
        { source: this.describe(), err: { message: this.lastError } },
        'git fetch failed; retrying on the next tick',
      );
    } finally {
      const sec = Number(process.hrtime.bigint() - started) / 1e9;
      this.opts.hooks?.onFetch?.(sec, ok);
      this.schedule();
    }
  }

  /**
   * A `git fetch` killed at its timeout (or with govops) while it updated refs leaves their lock files, and every
   * later fetch fails on them ("cannot lock ref"), across restarts. Only govops' own commands use the cache, one at
   * a time on the runner, and a killed command's whole process group is gone when its promise settles: a lock
   * present before a fetch is stale.
   */
  private async dropStaleLocks(ref: string): Promise<void> {
    for (const lock of [`${ref}.lock`, 'packed-refs.lock', 'shallow.lock', 'HEAD.lock', 'config.lock']) {
      await rm(join(this.repoDir, lock), { force: true });
    }
  }

  private async checkout(sha: string): Promise<void> {
    const dir = join(this.revsDir, sha);
    if (!this.complete.has(sha) || !(await exists(join(dir, '.git')))) {
      this.complete.delete(sha);
      await rm(dir, { recursive: true, force: true });
      // No `worktree prune` first: `--force` already adds over a registered worktree whose folder is missing
      // (the one case a prune would clear), and a git process less is on the path from a push hook to its
      // first write (issue #26). Stale registrations are pruned at start and after each reconcile (dropFolders).
      // `--force` twice: a `worktree add` killed at its timeout leaves its registration locked ("initializing"),
      // which one `--force` does not override (and `worktree prune` keeps): every later try, and every restart,
      // would fail on this commit. govops never locks a worktree of its cache itself.
      await this.git!.raw(['worktree', 'add', '--detach', '--force', '--force', dir, sha]);
      this.complete.add(sha);
    }
    await this.opts.hooks?.afterCheckout?.(dir);
    const revision: Revision = {
      id: sha,
      root: dir,
      paths: [this.path],
      display: '',
      observedAt: new Date().toISOString(),
      order: nextRevisionOrder(),
    };
    this.latest = revision;
    this.opts.logger.info({ revision: sha, source: this.describe() }, 'new git revision');
    for (const cb of this.listeners) cb(revision);
  }

  private schedule(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), jittered(this.opts.intervalMs));
    this.timer.unref();
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await access(p);
    return true;
  } catch {
    return false;
  }
}
