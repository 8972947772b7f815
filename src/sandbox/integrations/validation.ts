/** Validation tests the sandbox runs on create, update and delete (names observed in interface 2.2). */
import type { ValidationResults, ValidationTest } from '../../api/types.js';
import type { IntegrationType } from '../../kinds/registry.js';
import { INVALID_HOST_SUFFIX, type FailTestRule, type Failures, type Target } from './failures.js';

export const TEST = {
  initialBasic: 'Initial Validation: Basic Connection Test',
  defaultWarehouse: 'Initial Validation: Default Warehouse Access Test',
  privilegedRole: 'Initial Validation: Validate access to Privileged Role',
  rolePrefix: 'Initial Validation: Table Grants Role Prefix is Unique',
  databaseMissing: 'Validate Automatic: Database Does Not Exist',
  impersonationMissing: 'Validate Automatic: Impersonation Role Does Not Exist',
  bootstrapGrants: 'Validate Automatic Bootstrap User Grants',
  metastore: 'Metastore validation',
  basic: 'Basic Connection Test',
} as const;

export const BASIC_TESTS: ReadonlySet<string> = new Set([TEST.initialBasic, TEST.basic]);

type Planned = { name: string; run: boolean };

function impersonationOn(config: Record<string, unknown>): boolean {
  const imp = config.impersonation as { enabled?: unknown } | undefined;
  return imp?.enabled === true;
}

/** The tests of a kind for an operation; `run: false` ones are reported as skipped. */
export function plannedTests(
  type: IntegrationType,
  autoBootstrap: boolean,
  config: Record<string, unknown>,
  operation: Target['operation'],
): Planned[] {
  const create = operation === 'create';
  const auto = autoBootstrap && operation !== 'delete';
  switch (type) {
    case 'sql_analytics':
    case 'columnar_warehouse':
      if (operation === 'delete') return [{ name: TEST.initialBasic, run: true }];
      return [
        { name: TEST.initialBasic, run: true },
        { name: TEST.databaseMissing, run: auto && create },
        { name: TEST.impersonationMissing, run: auto && create && impersonationOn(config) },
        { name: TEST.bootstrapGrants, run: auto },
      ];
    case 'cloud_warehouse':
      if (operation === 'delete') {
        return [
          { name: TEST.initialBasic, run: true },
          { name: TEST.privilegedRole, run: autoBootstrap },
        ];
      }
      return [
        { name: TEST.initialBasic, run: true },
        { name: TEST.defaultWarehouse, run: true },
        { name: TEST.privilegedRole, run: auto },
        { name: TEST.rolePrefix, run: true },
        { name: TEST.databaseMissing, run: auto && create },
        { name: TEST.impersonationMissing, run: auto && create && impersonationOn(config) },
        { name: TEST.bootstrapGrants, run: auto },
      ];
    case 'lakehouse':
      return operation === 'delete'
        ? [{ name: TEST.basic, run: true }]
        : [
            { name: TEST.basic, run: true },
            { name: TEST.metastore, run: true },
          ];
    case 'dataset_warehouse':
      return [{ name: TEST.initialBasic, run: true }];
    case 'object_store':
    case 'distributed_sql':
      return [{ name: TEST.basic, run: true }];
  }
}

/**
 * Run the validation tests (with the documented failure triggers applied). `warnOnPass` (behaviour
 * validation-warning): when nothing failed, the last test that ran reports `warning`.
 */
export function runValidation(
  type: IntegrationType,
  autoBootstrap: boolean,
  config: Record<string, unknown>,
  target: Target,
  failures: Failures,
  warnOnPass = false,
): ValidationResults {
  const fired = new Set<FailTestRule>();
  const tests: ValidationTest[] = plannedTests(type, autoBootstrap, config, target.operation).map((p) => {
    if (!p.run) return { name: p.name, status: 'skipped', result: [] };
    if (BASIC_TESTS.has(p.name) && target.host.toLowerCase().endsWith(INVALID_HOST_SUFFIX)) {
      return { name: p.name, status: 'failed', result: [{ message: `Could not connect to ${target.host}: host not found` }] };
    }
    const forced = failures.forcedStatus(p.name, target, fired);
    if (forced === 'failed') return { name: p.name, status: 'failed', result: [{ message: `${p.name} failed (sandbox rule)` }] };
    if (forced === 'warning') return { name: p.name, status: 'warning', result: [{ message: `${p.name} warning (sandbox rule)` }] };
    return { name: p.name, status: 'passed', result: [] };
  });
  failures.spend(fired); // a rule's count is a number of validations, not of tests
  if (warnOnPass && !tests.some((t) => t.status === 'failed')) {
    const last = [...tests].reverse().find((t) => t.status === 'passed');
    if (last) Object.assign(last, { status: 'warning', result: [{ message: `${last.name}: passed with a warning (sandbox behaviour validation-warning)` }] });
  }
  return { status: overallStatus(tests), validationTests: tests };
}

/** failed if any test failed, else warning if any warned, else passed. */
export function overallStatus(tests: ValidationTest[]): string {
  if (tests.some((t) => t.status === 'failed')) return 'failed';
  if (tests.some((t) => t.status === 'warning')) return 'warning';
  return 'passed';
}

export function failedTests(results: ValidationResults): string[] {
  return results.validationTests.filter((t) => t.status === 'failed').map((t) => t.name);
}
