/** Create or update the preview's pull-request comment on the target's platform. */
import { secretRedactor } from '../util/redact.js';
import { upsertGithubComment } from './github.js';
import { upsertGitlabNote } from './gitlab.js';
import type { CommentTarget, UpsertOptions, UpsertResult } from './types.js';

export { CommentError, type CommentTarget, type UpsertOptions, type UpsertResult } from './types.js';
export { detectPlatform, githubTarget, gitlabTarget, prNumberFromEvent, TargetError, type Env } from './context.js';
export { fitBody, GITHUB_BODY_LIMIT } from './marker.js';

/**
 * The body is redacted before anything cuts it to the platform's limit (src/util/cut.ts). A Markdown document: its
 * last pass uses the operator's values only, as the preview's own (util/redact.ts `RedactScope`).
 */
export function upsertComment(target: CommentTarget, body: string, opts: UpsertOptions): Promise<UpsertResult> {
  const text = secretRedactor.redactText(body, 'operator');
  return target.platform === 'github' ? upsertGithubComment(target, text, opts) : upsertGitlabNote(target, text, opts);
}
