/** Create or update the preview's pull-request comment on the target's platform. */
import { upsertGithubComment } from './github.js';
import { upsertGitlabNote } from './gitlab.js';
import type { CommentTarget, UpsertOptions, UpsertResult } from './types.js';

export { CommentError, type CommentTarget, type UpsertOptions, type UpsertResult } from './types.js';
export { detectPlatform, githubTarget, gitlabTarget, prNumberFromEvent, TargetError, type Env } from './context.js';
export { fitBody, GITHUB_BODY_LIMIT } from './marker.js';

export function upsertComment(target: CommentTarget, body: string, opts: UpsertOptions): Promise<UpsertResult> {
  return target.platform === 'github' ? upsertGithubComment(target, body, opts) : upsertGitlabNote(target, body, opts);
}
