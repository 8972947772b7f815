/**
 * `govops comment FILE`: create or update the preview's comment on a pull request (GitHub, with
 * Octokit) or merge request (GitLab notes), found again by its hidden marker. Used by action.yml and
 * ci/gitlab-preview.yml. The work is in comment-action.ts, loaded when the command runs.
 */
import { Option, type Command } from '../commander.js';
import { COMMAND_SUMMARIES } from './summaries.js';

export interface CommentFlags {
  platform?: 'github' | 'gitlab';
  repo?: string;
  number?: string;
  apiUrl?: string;
  author?: string;
  marker?: string;
  id?: string;
  jobSummary?: string;
}

export function register(program: Command): void {
  program
    .command('comment')
    .description(COMMAND_SUMMARIES.comment.description)
    .argument('<file>', 'the comment: Markdown, or the JSON of `govops preview -o json` (its markdown is posted)')
    .addOption(new Option('--platform <name>', 'where to comment (default: detected from GITHUB_ACTIONS / GITLAB_CI)').choices(['github', 'gitlab']))
    .option('--repo <repo>', 'GitHub owner/name (default GITHUB_REPOSITORY) or GitLab project id or path (default CI_PROJECT_ID)')
    .option('--number <n>', 'pull-request number (default: from the GitHub event) or merge-request IID (default CI_MERGE_REQUEST_IID)')
    .option('--api-url <url>', 'API root (default GITHUB_API_URL or https://api.github.com; GitLab: CI_API_V4_URL)')
    .option('--author <login>', 'only edit a marked comment written by this login (e.g. github-actions[bot]); default: the token\'s user (GitHub: GET /user, and with an app\'s token such as GITHUB_TOKEN any bot account; GitLab: the user of GOVOPS_GITLAB_TOKEN)')
    .option('--id <name>', 'one of several previews of a pull request (e.g. one per environment): its own comment, marked <!-- govops-preview: NAME -->, with NAME in its heading')
    .option('--marker <text>', 'the hidden first line that identifies the comment (default: the preview marker)')
    .option(
      '--job-summary <file>',
      'also append the comment to FILE (GITHUB_STEP_SUMMARY); then a comment that cannot be written is a warning, not a failure',
    )
    .action(async (file: string, flags: CommentFlags, command: Command) => {
      const { commentAction } = await import('./comment-action.js');
      await commentAction(file, flags, command);
    });
}
