import type { Command } from 'commander';
import { register as validate } from './validate.js';
import { register as schema } from './schema.js';
import { register as plan } from './plan.js';
import { register as apply } from './apply.js';
import { register as scripts } from './scripts.js';
import { register as acknowledge } from './acknowledge.js';
import { register as run } from './run.js';
import { register as sandbox } from './sandbox.js';
import { register as preview } from './preview.js';
import { register as webhooks } from './webhooks.js';
import { register as comment } from './comment.js';
import { register as healthcheck } from './healthcheck.js';
import { register as state } from './state.js';
import { register as exportCmd } from './export.js';

/** Every command, in the order `govops --help` lists them. */
export const COMMANDS: Array<(program: Command) => void> = [validate, plan, preview, comment, apply, state, exportCmd, run, healthcheck, scripts, acknowledge, webhooks, sandbox, schema];
