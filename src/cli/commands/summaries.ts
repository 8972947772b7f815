/**
 * What `govops --help` lists for each command, in its order: the term (name, [options], arguments) and the
 * description. The one source of each command's description (its declaration module reads it here); the term
 * follows the declaration, and test/cli/program.test.ts fails when the two disagree. `govops --help` alone
 * builds the root with these entries only (main.ts), not the 14 declarations and their helpers (issue #26).
 */
export interface CommandSummary {
  readonly term: string;
  readonly description: string;
}

export const COMMAND_SUMMARIES = {
  validate: {
    term: 'validate [options] [paths...]',
    description: 'check manifests offline: YAML, schemas, duplicates, plain-literal credentials (secrets are not resolved)',
  },
  plan: {
    term: 'plan [options] [paths...]',
    description: 'show the changes apply would make (create, update, replace, delete, adopt)',
  },
  preview: {
    term: 'preview [options] [paths...]',
    description: 'render what a pull request changes, as Markdown for a PR comment (exit 0 none, 2 changes, 1 error)',
  },
  comment: {
    term: 'comment [options] <file>',
    description: 'create or update the preview comment of a pull request (GitHub) or merge request (GitLab), found by its marker',
  },
  apply: {
    term: 'apply [options] [paths...]',
    description: 'apply the plan: dry run, then the real call and status polling for each resource (no prompt); `apply FILE` applies a plan saved with plan --out',
  },
  state: {
    term: 'state',
    description: 'what govops manages (its state file or database), under the state lock: list, show, forget, adopt, migrate',
  },
  export: {
    term: 'export [options]',
    description: 'write manifests for the live integrations, webhooks and data sources (credentials as fromEnv references, defaults left out)',
  },
  run: {
    term: 'run [options]',
    description: 'reconcile continuously from a Git repository or a watched folder; serves /healthz /readyz /metrics /status /hooks/git',
  },
  healthcheck: {
    term: 'healthcheck [options]',
    description: 'exit 0 when the running `govops run` answers GET /healthz, at the address it was started with (its --listen or GOVOPS_LISTEN)',
  },
  scripts: {
    term: 'scripts [options] <name> [paths...]',
    description: 'fetch the script to run in the platform for an integration in the manual flow (autoBootstrap false); govops never runs it',
  },
  acknowledge: {
    term: 'acknowledge [options] [paths...]',
    description: 'after the platform scripts ran: write the govops/manual-step acknowledgments into the manual-flow Integration manifests (comments and layout kept; offline)',
  },
  webhooks: {
    term: 'webhooks',
    description: 'webhook deliveries: history, retry failed deliveries, event names, live webhooks and who manages them',
  },
  sandbox: {
    term: 'sandbox [options]',
    description: 'run a local sandbox of the service (integrations, webhooks, auth, fault injection)',
  },
  schema: {
    term: 'schema',
    description: 'print the combined JSON Schema of govops manifests (for the YAML language server)',
  },
} as const satisfies Record<string, CommandSummary>;
