// Shared by the benchmarks (not a benchmark itself): 10,000-scale manifest sets.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Three of the five kinds have manual-flow scripts: their changes await a `govops/manual-step` acknowledgment
 * unless the operator trusts them to have run (`--manual-steps trust`). The benchmarks measure the trusted path
 * (every manifest is written), set for the CLI processes they start by this variable.
 */
export const TRUST_MANUAL_STEPS = { GOVOPS_MANUAL_STEPS: 'trust' };

/**
 * Secrets of the manifests. Each at least 4 characters: a shorter one draws a warning per reference (it cannot be
 * redacted), and locating 4,000 warnings parses every file again with `yaml` (2 s of a 10,000 plan): a run of
 * the warning path, not of the plan the benches measure.
 */
export const ENV = { GOVOPS_SECRET_WH_PASSWORD: 'pw-wh', GOVOPS_SECRET_ADMIN_PASSWORD: 'pw-admin', GOVOPS_SECRET_SECRET_KEY: 'secret-key-value', GOVOPS_SECRET_LAKE_TOKEN: 'lake-token-value' };

/** Five kinds, with secrets from the environment and from a file. */
export function manifest(i) {
  const name = `m-${i}`;
  switch (i % 5) {
    case 0:
      return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: object_store\n  autoBootstrap: false\n  config:\n    name: ${name}\n    cloudAccountId: "123456789012"\n    cloudRegion: eu-west-1\n    cloudLocationRole: arn:aws:iam::123456789012:role/${name}\n    cloudLocationPath: s3://${name}/data\n    authenticationType: auto\n`;
    case 1:
      return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: cloud_warehouse\n  autoBootstrap: true\n  config:\n    host: wh-${i}.example.com\n    warehouse: WH\n    database: GOV\n    role: ADMIN\n    authenticationType: userPassword\n    username: svc\n    password: { fromEnv: GOVOPS_SECRET_WH_PASSWORD }\n    audit: { enabled: true, historicalIngestionMonths: 6 }\n    lineage:\n      enabled: true\n      lineageConfig: { tableFilter: "^.*$", ingestBatchSize: 500 }\n  deleteCredentials:\n    authenticationType: userPassword\n    username: admin\n    password: { fromEnv: GOVOPS_SECRET_ADMIN_PASSWORD }\n    role: ADMIN\n`;
    case 2:
      return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: columnar_warehouse\n  autoBootstrap: false\n  config:\n    host: col-${i}.example.com\n    database: gov\n    authenticationType: accessKey\n    databaseUser: svc\n    accessKeyId: AKIDEXAMPLE\n    secretKey: { fromEnv: GOVOPS_SECRET_SECRET_KEY }\n`;
    case 3:
      return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: lakehouse\n  autoBootstrap: false\n  config:\n    workspaceUrl: https://lake-${i}.example.com\n    httpPath: /sql/1.0/warehouses/abc\n    token: { fromEnv: GOVOPS_SECRET_LAKE_TOKEN }\n    catalog: gov_${i}\n`;
    default:
      return `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: sql_analytics\n  autoBootstrap: false\n  config:\n    host: sql-${i}.example.com\n    database: gov\n    schema: views\n    username: svc\n    password: { fromFile: secrets/sql.txt }\n    impersonation: { enabled: true }\n`;
  }
}


/** Write `n` integration manifests (`perFile` per file, in 10 team folders each with secrets/sql.txt) under `dir`. */
export async function writeIntegrations(dir, n, perFile = 20) {
  for (let f = 0; f * perFile < n; f++) {
    const sub = join(dir, `team-${f % 10}`);
    await mkdir(join(sub, 'secrets'), { recursive: true });
    const docs = [];
    for (let i = f * perFile; i < Math.min(n, (f + 1) * perFile); i++) docs.push(manifest(i));
    await writeFile(join(sub, `file-${f}.yaml`), docs.join('---\n'));
  }
  for (let t = 0; t < Math.min(10, Math.ceil(n / perFile)); t++) await writeFile(join(dir, `team-${t}`, 'secrets', 'sql.txt'), 'pw-sql');
}
