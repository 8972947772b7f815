// Load + validate 10,000 manifests (500 files x 20 documents, every kind) with loadManifests.
// Target (issue 2): well under 2 s. YAML: js-yaml fast path (src/manifests/jsyaml.ts), `yaml` for the rest.
// The first run of the process is the cold one: it loads the generated checks of the kinds it meets, as `validate`
// does (dist/manifests/validators/manifest.<kind>.generated.cjs; the full module, validators.generated.cjs, is not
// loaded for these kinds, so timing it apart measured a load govops does not do here).
// Run: npm run build && node --expose-gc bench/validate.bench.mjs     (VALIDATE_FILES=50 for a quick run)
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadManifests } from '../dist/manifests/loader.js';

const FILES = Number(process.env.VALIDATE_FILES ?? 500);
const PER_FILE = 20;

function manifest(i) {
  const name = `m-${i}`;
  switch (i % 5) {
    case 0:
      return `apiVersion: govops/v1\nkind: Webhook\nmetadata:\n  name: ${name}\nspec:\n  url: https://hooks.example.com/${i}\n  global: false\n  notificationType: [healthCheckFailed, modelCreated]\n  actionType: triggered\n  secret: { fromEnv: GOVOPS_SECRET_HOOK_SECRET }\n`;
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

const dir = await mkdtemp(join(tmpdir(), 'govops-bench-'));
try {
  for (let f = 0; f < FILES; f++) {
    const sub = join(dir, `team-${f % 10}`);
    await mkdir(sub, { recursive: true });
    const docs = [];
    for (let d = 0; d < PER_FILE; d++) docs.push(manifest(f * PER_FILE + d));
    await writeFile(join(sub, `file-${f}.yaml`), docs.join('---\n'));
  }
  const times = [];
  const cpus = [];
  for (let run = 0; run < 4; run++) {
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const set = await loadManifests(['.'], { cwd: dir });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(c0);
    times.push(ms);
    cpus.push((cpu.user + cpu.system) / 1000);
    const errors = set.diagnostics.filter((d) => d.severity === 'error');
    // thrown, not process.exit: the temp folder is removed below
    if (set.manifests.length !== FILES * PER_FILE || errors.length) {
      throw new Error(`unexpected result: ${set.manifests.length} manifests, ${errors.length} errors ${JSON.stringify(errors.slice(0, 3))}`);
    }
  }
  const sorted = [...times.slice(1)].sort((a, b) => a - b);
  console.log(`loadManifests: ${FILES * PER_FILE} manifests in ${FILES} files`);
  console.log(`  first run (cold: loads the generated checks of the kinds it meets): ${times[0].toFixed(0)} ms`);
  console.log(`  warm runs: min ${sorted[0].toFixed(0)} ms, median ${sorted[1].toFixed(0)} ms, max ${sorted[2].toFixed(0)} ms`);
  console.log(`  CPU time (~ what an idle machine takes): first run ${cpus[0].toFixed(0)} ms, warm min ${Math.min(...cpus.slice(1)).toFixed(0)} ms`);
  console.log(`  load average now: ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores`);
  const cold = times[0];
  console.log(`  cold (first run): ${cold.toFixed(0)} ms -> target well under 2000 ms: ${cold < 2000 ? 'OK' : 'TOO SLOW'}`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
