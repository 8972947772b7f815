/** The result of `govops preview`: a plain value, rendered as Markdown (and JSON with `-o json`). */
import type { Diagnostic } from '../manifests/types.js';
import type { Plan } from '../plan/types.js';
import type { ChangedFile } from './git.js';
import type { ManifestChange } from './manifest-diff.js';
import type { UnknownSecret } from './unknown-secrets.js';

/** Hidden first line of the comment: a CI bot finds its previous comment by it and edits it in place. */
export const PREVIEW_MARKER = '<!-- govops-preview -->';

export interface PreviewResult {
  formatVersion: 1;
  marker: typeof PREVIEW_MARKER;
  /** `live`: planned against the service; `offline`: manifests only (live state not consulted). */
  mode: 'live' | 'offline';
  /** Short SHA of HEAD, when in a git work tree. */
  revision?: string;
  base?: { ref: string; mergeBase: string; files: ChangedFile[] };
  /** No manifest errors. */
  valid: boolean;
  /** Manifest errors and warnings (`file:line:col: Kind/name: message`). */
  diagnostics: Diagnostic[];
  /** Secret references that could not be resolved here: planned as unknown (never a change). */
  unknownSecrets: UnknownSecret[];
  /** Live mode: the plan. */
  plan?: Plan;
  /** Offline mode: manifest-level changes against the base (`baseCompared` false without --base). */
  offline?: { baseCompared: boolean; changes: ManifestChange[]; resources: Array<{ resourceKind: string; name: string; file: string }> };
  /** Why the live state was not consulted (offline mode). */
  liveError?: string;
  /** A failure that stopped the preview (other than invalid manifests). */
  error?: string;
  /** There is something to change. */
  changed: boolean;
  /** 0 no changes, 2 changes, 1 invalid manifests or failure. */
  exitCode: 0 | 1 | 2;
}
