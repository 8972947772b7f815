// Injected by scripts/build-bin.mjs into the CommonJS `govops` command: what `import.meta.url` was in the modules it
// holds (this file's URL; it sits in dist/cli/ as they did).
export const import_meta_url = require('node:url').pathToFileURL(__filename).href;
