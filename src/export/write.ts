/**
 * The files `govops export` writes: manifests (one file per resource or one per kind) and the commented env
 * template of the secret variables. Rendering is pure (`renderExport`); `writeExport` only creates the files,
 * never overwriting one unless asked.
 */
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { yamlLib } from '../manifests/yaml-lib.js';
import { UserError } from '../errors.js';
import type { ExportedResource, ExportKind, SecretVariable } from './resources.js';

export type Layout = 'resource' | 'kind';
export const ENV_TEMPLATE = 'secrets.env.template';

const KIND_FILE: Record<ExportKind, string> = { Integration: 'integrations', Webhook: 'webhooks', DataSource: 'data-sources' };
const KIND_PREFIX: Record<ExportKind, string> = { Integration: 'integration', Webhook: 'webhook', DataSource: 'data-source' };
const KIND_ORDER: readonly ExportKind[] = ['Integration', 'DataSource', 'Webhook'];

function documentOf(r: ExportedResource): string {
  const { stringify } = yamlLib();
  return `# ${r.kind}/${r.name}: exported by govops export (live id ${r.liveId})\n${stringify(r.manifest, { lineWidth: 0 })}`;
}

/** File name -> content. */
export function renderExport(resources: readonly ExportedResource[], variables: readonly SecretVariable[], layout: Layout): Map<string, string> {
  const files = new Map<string, string>();
  const sorted = [...resources].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const r of sorted) {
    const file = layout === 'kind' ? `${KIND_FILE[r.kind]}.yaml` : `${KIND_PREFIX[r.kind]}-${r.name}.yaml`;
    const prev = files.get(file);
    files.set(file, prev === undefined ? documentOf(r) : `${prev}---\n${documentOf(r)}`);
  }
  if (variables.length > 0) files.set(ENV_TEMPLATE, envTemplate(variables));
  return files;
}

/** The env template: every variable the manifests read, each under a comment naming where it is used. */
export function envTemplate(variables: readonly SecretVariable[]): string {
  const lines = [
    '# The secrets the exported manifests read (fromEnv). The service never returns credentials:',
    '# fill in each value from where it is kept, and give the variables to govops plan/apply/run',
    '# (a secret store, the CI secrets, or `set -a; . ./this-file; set +a` from a copy kept out of Git).',
    '',
  ];
  for (const v of variables) lines.push(`# ${v.resource} ${v.path}`, `${v.name}=`);
  return `${lines.join('\n')}\n`;
}

async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}

/** Write the files under `dir` (created when missing). Refuses to replace an existing file unless `force`. */
export async function writeExport(dir: string, files: ReadonlyMap<string, string>, force: boolean): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  if (!force) {
    // every file checked before any is written: a refusal leaves the folder as it was
    for (const name of files.keys()) {
      const file = path.join(dir, name);
      if (await exists(file)) throw new UserError(`${file} exists: govops export does not replace files`, 'export into an empty folder, or pass --force to replace them');
    }
  }
  const written: string[] = [];
  for (const [name, content] of files) {
    const file = path.join(dir, name);
    try {
      await writeFile(file, content, { flag: force ? 'w' : 'wx', mode: 0o644 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new UserError(`${file} exists: govops export does not replace files`, 'export into an empty folder, or pass --force to replace them');
      }
      throw err;
    }
    written.push(file);
  }
  return written;
}
