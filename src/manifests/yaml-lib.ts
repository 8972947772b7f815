/**
 * The `yaml` library (positions, precise errors), loaded on first use: the common case — valid files,
 * read by js-yaml (jsyaml.ts) — never needs it, and it is a hundred modules to load.
 */
import { createRequire } from 'node:module';

type YamlModule = typeof import('yaml');
let lib: YamlModule | undefined;

export function yamlLib(): YamlModule {
  return (lib ??= createRequire(import.meta.url)('yaml') as YamlModule);
}
