/** What `govops comment` does (loaded only when it runs; declared in comment.ts). */
import { appendFile, readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  CommentError,
  detectPlatform,
  githubTarget,
  gitlabTarget,
  TargetError,
  upsertComment,
  type CommentTarget,
  type Env,
} from '../../comments/index.js';
import { UserError } from '../../errors.js';
import { registerSecrets } from '../../util/redact.js';
import { printable } from '../../util/terminal.js';
import { PREVIEW_MARKER } from '../../preview/types.js';
import { contextFrom } from '../context.js';
import { parseCount } from '../flags.js';
import type { CommentFlags } from './comment.js';

/** The Markdown to post: the file itself, or the `markdown` of a `govops preview -o json` document. */
export function commentBody(text: string): string {
  if (text.trimStart().startsWith('{')) {
    try {
      const doc = JSON.parse(text) as { markdown?: unknown };
      if (typeof doc.markdown === 'string') return doc.markdown;
    } catch {
      /* not JSON: post the text */
    }
  }
  return text;
}

/** A comment's name (`--id`): it goes into an HTML comment and a heading, so letters, digits, `.`, `_`, `-` only. */
const COMMENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * One of several previews of a pull request (one job per environment, docs/environments.md): its own marker,
 * `<!-- govops-preview: ID -->`, in place of the preview's, so each job finds and edits its own comment instead of
 * the one the other wrote; and its heading names it (a preview's, or a plan's posted for a rendered environment), so
 * reviewers tell them apart.
 */
export function namedComment(body: string, id: string): { marker: string; body: string } {
  if (!COMMENT_ID.test(id)) throw new UserError(`--id must be letters, digits, ".", "_" or "-" (at most 64), got "${printable(id)}"`);
  const marker = `<!-- govops-preview: ${id} -->`;
  const start = body.trimStart();
  const rest = start.startsWith(PREVIEW_MARKER) ? start.slice(PREVIEW_MARKER.length).replace(/^\r?\n/, '') : body;
  return { marker, body: `${marker}\n${rest.replace(/^### govops (preview|plan)$/m, (_, what: string) => `### govops ${what}: ${id}`)}` };
}

async function readEvent(env: Env): Promise<unknown> {
  const file = env.GITHUB_EVENT_PATH;
  if (!file) return undefined;
  try {
    return JSON.parse(await readFile(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

async function target(flags: CommentFlags, env: Env): Promise<CommentTarget> {
  const platform = flags.platform ?? detectPlatform(env);
  if (!platform) throw new UserError('cannot tell where to comment', 'pass --platform github or --platform gitlab');
  const number = parseCount('--number', flags.number, 1);
  const o = {
    ...(flags.repo !== undefined ? { repo: flags.repo } : {}),
    ...(number !== undefined ? { number } : {}),
    ...(flags.apiUrl !== undefined ? { apiUrl: flags.apiUrl } : {}),
  };
  try {
    return platform === 'github' ? githubTarget(env, await readEvent(env), o) : gitlabTarget(env, o);
  } catch (err) {
    if (err instanceof TargetError) throw new UserError(err.message);
    throw err;
  }
}

export async function commentAction(file: string, flags: CommentFlags, command: Command): Promise<void> {
  const ctx = contextFrom(command);
  const env = process.env;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (flags.id !== undefined && flags.marker !== undefined) throw new UserError('--id and --marker cannot be used together', '--id sets the marker');
  const named = flags.id !== undefined ? namedComment(commentBody(text), flags.id) : undefined;
  const body = named?.body ?? commentBody(text);
  if (flags.jobSummary) await appendFile(flags.jobSummary, `${body.trimEnd()}\n`);
  try {
    const t = await target(flags, env);
    registerSecrets(t.token);
    const r = await upsertComment(t, body, {
      marker: named?.marker ?? flags.marker ?? PREVIEW_MARKER,
      ...(flags.author !== undefined ? { author: flags.author } : {}),
    });
    if (ctx.options.output === 'json') ctx.stdout.write(`${JSON.stringify(r)}\n`);
    const deleted = r.deleted?.length ? `; deleted our other marked comment${r.deleted.length === 1 ? '' : 's'} ${r.deleted.map((id) => printable(id)).join(', ')}` : '';
    ctx.stderr.write(`${r.action} comment ${printable(String(r.id))}${r.url ? ` (${printable(r.url)})` : ''}${deleted}\n`);
  } catch (err) {
    if (!(err instanceof CommentError || err instanceof UserError) || !flags.jobSummary) throw err;
    // The body is in the job summary: a comment that cannot be written (a fork's read-only token) does not fail the job.
    const message = err instanceof UserError && err.hint ? `${err.message} (${err.hint})` : err.message;
    // The platform's message is the platform's text: escaped for the terminal (src/util/terminal.ts).
    ctx.stderr.write(`warning: the comment was not written: ${printable(message)}; the preview is in the job summary\n`);
    if (env.GITHUB_ACTIONS === 'true') ctx.stdout.write(`::warning title=govops preview::${escapeAnnotation(`comment not written: ${printable(message)}`)}\n`);
  }
}

/** A GitHub workflow-command message: no newlines or percent signs that would end or alter it. */
function escapeAnnotation(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}
