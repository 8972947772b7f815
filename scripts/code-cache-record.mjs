// Preloaded (node --import) into each run of scripts/build-code-cache.mjs: every CommonJS file under dist/ or
// node_modules/ that the run loads is compiled with what earlier runs recorded for it (src/cli/code-cache.ts), and at
// exit its compiled code, now holding what this run compiled too, is written to dist/code-cache/ when larger than what
// is there. The runs go one after another, so the last one's code holds what all of them compiled.
// A process that changes V8's flags (the daemon sets --expose-gc: src/daemon/memory.ts) makes code a process with
// the default flags rejects: its record is taken just before the first change, and what it compiles after is not
// recorded. The command's own flags (src/cli/v8-flags.ts, set by bin.ts before the command line loads) are set here
// first, before anything is recorded, and the index names them: the records are V8's code under those flags.
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CODE_CACHE_DIR, CODE_CACHE_INDEX, RECORDING, cachedCode, pathUnder, plainCommonJs, readCodeCacheIndex, runCompiled, sha1 } from '../dist/cli/code-cache.js';
import { COMMAND_V8_FLAGS } from '../dist/cli/v8-flags.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const Module = createRequire(import.meta.url)('node:module');
const compile = Module.prototype._compile;
const index = readCodeCacheIndex(root) ?? { v8: process.versions.v8, arch: process.arch, flags: COMMAND_V8_FLAGS, files: {} };
/** By path under the root: the text's hash and the script it was compiled to. */
const scripts = new Map();

/** The compiled code of each recorded file, as of now. */
const snapshot = () => new Map([...scripts].map(([rel, { hash, script }]) => [rel, { hash, data: script.createCachedData() }]));
let frozen;
const v8 = createRequire(import.meta.url)('node:v8');
const setFlags = v8.setFlagsFromString;
setFlags.call(v8, COMMAND_V8_FLAGS);
v8.setFlagsFromString = function setFlagsFromString(flags) {
  if (flags !== COMMAND_V8_FLAGS) frozen ??= snapshot();
  return setFlags.call(this, flags);
};

const recordable = (rel, content) => (rel.startsWith('dist/') || rel.startsWith('node_modules/')) && !content.startsWith('#!');

Module.prototype._compile = Object.assign(
  function compileRecorded(content, filename, ...rest) {
    const rel = pathUnder(root, filename);
    if (frozen || !plainCommonJs(rest) || !recordable(rel, content)) return compile.call(this, content, filename, ...rest);
    const { script, result } = runCompiled(this, content, filename, cachedCode(root, index, filename, content));
    scripts.set(rel, { hash: sha1(content), script });
    return result;
  },
  { [RECORDING]: true },
);

process.on('exit', () => {
  const dir = join(root, CODE_CACHE_DIR);
  mkdirSync(dir, { recursive: true });
  for (const [rel, { hash, data }] of frozen ?? snapshot()) {
    const name = `${hash}.bin`;
    let before = 0;
    try {
      before = statSync(join(dir, name)).size;
    } catch {
      // none yet
    }
    if (index.files[rel]?.sha1 === hash && before >= data.length) continue;
    writeFileSync(join(dir, name), data);
    index.files[rel] = { sha1: hash, cache: name };
  }
  writeFileSync(join(dir, `${CODE_CACHE_INDEX}.tmp`), JSON.stringify(index));
  renameSync(join(dir, `${CODE_CACHE_INDEX}.tmp`), join(dir, CODE_CACHE_INDEX));
});
