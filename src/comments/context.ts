/**
 * The comment target from a CI job's environment (pure: the caller reads the event file).
 * GitHub Actions: GITHUB_API_URL, GITHUB_REPOSITORY, the pull request's number from the event payload
 * (GITHUB_EVENT_PATH), the token from GOVOPS_GITHUB_TOKEN or GITHUB_TOKEN.
 * GitLab CI: CI_API_V4_URL, CI_MERGE_REQUEST_PROJECT_ID (else CI_PROJECT_ID), CI_MERGE_REQUEST_IID,
 * the token from GOVOPS_GITLAB_TOKEN (sent as PRIVATE-TOKEN), else CI_JOB_TOKEN (JOB-TOKEN).
 */
import type { CommentTarget } from './types.js';

export type Env = Record<string, string | undefined>;

export interface TargetOverrides {
  /** `owner/name` (GitHub) or project id or path (GitLab). */
  repo?: string;
  number?: number;
  apiUrl?: string;
}

/** A setting the job does not give: says which variable or flag is missing. */
export class TargetError extends Error {
  override readonly name = 'TargetError';
}

const nonEmpty = (v: string | undefined): string | undefined => (v !== undefined && v.trim() !== '' ? v.trim() : undefined);

export function detectPlatform(env: Env): 'github' | 'gitlab' | undefined {
  if (env.GITHUB_ACTIONS === 'true') return 'github';
  if (env.GITLAB_CI === 'true') return 'gitlab';
  return undefined;
}

function positive(n: unknown): number | undefined {
  const v = typeof n === 'string' ? Number(n) : n;
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined;
}

/** The pull request's number in a GitHub event payload (pull_request, pull_request_target, issue_comment). */
export function prNumberFromEvent(event: unknown): number | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const e = event as { pull_request?: { number?: unknown }; issue?: { number?: unknown }; number?: unknown };
  return positive(e.pull_request?.number) ?? positive(e.issue?.number) ?? positive(e.number);
}

export function githubTarget(env: Env, event: unknown, o: TargetOverrides = {}): CommentTarget {
  const token = nonEmpty(env.GOVOPS_GITHUB_TOKEN) ?? nonEmpty(env.GITHUB_TOKEN);
  if (!token) throw new TargetError('no GitHub token: set GITHUB_TOKEN (the action passes github.token)');
  const repository = o.repo ?? nonEmpty(env.GITHUB_REPOSITORY);
  const m = repository ? /^([^/\s]+)\/([^/\s]+)$/.exec(repository) : null;
  if (!m) throw new TargetError(`no repository: set GITHUB_REPOSITORY or --repo to owner/name${repository ? ` (got "${repository}")` : ''}`);
  const number = o.number ?? prNumberFromEvent(event);
  if (number === undefined) throw new TargetError('no pull-request number: run on a pull_request event, or pass --number');
  return {
    platform: 'github',
    apiUrl: o.apiUrl ?? nonEmpty(env.GITHUB_API_URL) ?? 'https://api.github.com',
    token,
    owner: m[1]!,
    repo: m[2]!,
    number,
  };
}

export function gitlabTarget(env: Env, o: TargetOverrides = {}): CommentTarget {
  const own = nonEmpty(env.GOVOPS_GITLAB_TOKEN);
  const job = nonEmpty(env.CI_JOB_TOKEN);
  if (!own && !job) throw new TargetError('no GitLab token: set GOVOPS_GITLAB_TOKEN (a project access token with the api scope)');
  const apiUrl = o.apiUrl ?? nonEmpty(env.CI_API_V4_URL);
  if (!apiUrl) throw new TargetError('no GitLab API URL: set CI_API_V4_URL or --api-url');
  const project = o.repo ?? nonEmpty(env.CI_MERGE_REQUEST_PROJECT_ID) ?? nonEmpty(env.CI_PROJECT_ID);
  if (!project) throw new TargetError('no project: set CI_PROJECT_ID or --repo');
  const number = o.number ?? positive(env.CI_MERGE_REQUEST_IID);
  if (number === undefined) throw new TargetError('no merge request: run in a merge-request pipeline (CI_MERGE_REQUEST_IID), or pass --number');
  return {
    platform: 'gitlab',
    apiUrl,
    token: (own ?? job)!,
    tokenHeader: own ? 'PRIVATE-TOKEN' : 'JOB-TOKEN',
    project,
    number,
  };
}
