/** DataSource manifests: the schema (parse) and the checks against the set (loadManifests on real files). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prefixUnderLocation } from '../../src/manifests/data-sources.js';
import { loadManifests } from '../../src/manifests/loader.js';
import { at, errors, warnings } from './helpers.js';

const store = (name: string, location: string, extra = '') =>
  `apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: ${name}\nspec:\n  type: object_store\n  autoBootstrap: false\n  config:\n    name: ${name}\n    cloudAccountId: "1"\n    cloudRegion: r\n    cloudLocationRole: role\n    cloudLocationPath: ${location}\n    authenticationType: auto\n${extra}`;
const source = (name: string, integration: string, dataSourceName: string, prefix: string) =>
  `apiVersion: govops/v1\nkind: DataSource\nmetadata:\n  name: ${name}\nspec:\n  integration: ${integration}\n  dataSourceName: ${dataSourceName}\n  prefix: ${prefix}\n`;

describe('DataSource schema', () => {
  it('accepts integration, dataSourceName and prefix', () => {
    expect(errors(source('a', 'raw', 'A', 's3://b/base/a'))).toEqual([]);
    expect(warnings(source('a', 'raw', 'A', 's3://b/base/a'))).toEqual([]);
  });

  it('requires the three fields and refuses others, at file:line:col', () => {
    const text = 'apiVersion: govops/v1\nkind: DataSource\nmetadata:\n  name: a\nspec:\n  integration: raw\n  prefx: s3://b/x\n';
    const errs = errors(text);
    expect(errs).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ ...at(text, 'prefx'), kind: 'DataSource', name: 'a', message: expect.stringMatching(/prefx/) }),
        expect.objectContaining({ message: expect.stringMatching(/dataSourceName/) }),
      ]),
    );
  });

  it('types: prefix and dataSourceName are strings (interface 2.3)', () => {
    const text = source('a', 'raw', 'A', '[1, 2]');
    expect(errors(text)).toEqual([expect.objectContaining({ ...at(text, '[1, 2]'), message: expect.stringMatching(/string/) })]);
  });

  it('an empty name or prefix is a warning only (the interface says "required string")', () => {
    expect(errors(source('a', 'raw', '""', '""'))).toEqual([]);
    expect(warnings(source('a', 'raw', '""', '""')).length).toBe(2);
  });

  it('secret references are not accepted in a data source', () => {
    const text = source('a', 'raw', 'A', '{ fromEnv: GOVOPS_SECRET_P }');
    expect(errors(text)).toEqual([expect.objectContaining({ message: expect.stringMatching(/string/) })]);
  });

  it('the unknown-kind message lists DataSource', () => {
    const text = 'apiVersion: govops/v1\nkind: DataSorce\nmetadata:\n  name: a\nspec: {}\n';
    expect(errors(text)[0]!.message).toBe('unknown kind `DataSorce`: must be Integration, Webhook or DataSource (did you mean `DataSource`?)');
  });
});

describe('prefix under the cloudLocationPath', () => {
  it.each([
    ['s3://b/base', 's3://b/base', true],
    ['s3://b/base', 's3://b/base/', true],
    ['s3://b/base', 's3://b/base/x/*', true],
    ['s3://b/base/', 's3://b/base/x', true],
    ['s3://b/base/', 's3://b/base', true],
    ['s3://b/base', 's3://b/basement', false],
    ['s3://b/base/', 's3://b/basement', false],
    ['s3://b/base', 's3://other/base/x', false],
    ['s3://b/base', 'base/x', false],
    ['s3://b/Base', 's3://b/base/x', false],
    ['', 's3://b/x', false],
    ['s3://', 's3://any/x', true],
    ['s3://', 'gs://any/x', false],
    ['s3://b/base//', 's3://b/base/x', true],
  ])('%s holds %s: %s', (location, prefix, expected) => {
    expect(prefixUnderLocation(location, prefix)).toBe(expected);
  });
});

describe('DataSource against the manifest set', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'govops-ds-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const load = async (files: Record<string, string>) => {
    for (const [f, text] of Object.entries(files)) await writeFile(join(dir, f), text);
    return loadManifests(['.'], { cwd: dir });
  };
  const errs = (set: Awaited<ReturnType<typeof load>>) => set.diagnostics.filter((d) => d.severity === 'error');

  it('valid: several data sources under one location, one name per integration', async () => {
    const set = await load({
      'store.yaml': store('raw', 's3://raw/base/'),
      'ds.yaml': [source('a', 'raw', 'A', 's3://raw/base/a'), source('b', 'raw', 'B', 's3://raw/base/b/*')].join('---\n'),
    });
    expect(set.diagnostics).toEqual([]);
    expect(set.manifests.map((m) => `${m.manifest.kind}/${m.manifest.metadata.name}`).sort()).toEqual(['DataSource/a', 'DataSource/b', 'Integration/raw']);
  });

  it('a prefix outside the location is an error at the prefix, offline', async () => {
    const ds = source('a', 'raw', 'A', 's3://elsewhere/x');
    const set = await load({ 'store.yaml': store('raw', 's3://raw/base'), 'ds.yaml': ds });
    expect(errs(set)).toEqual([
      {
        file: 'ds.yaml',
        ...at(ds, 's3://elsewhere/x'),
        kind: 'DataSource',
        name: 'a',
        severity: 'error',
        message:
          'prefix `s3://elsewhere/x` is not under the cloudLocationPath `s3://raw/base` of Integration/raw (interface 2.3: the base location used when registering data sources); write a path that starts with `s3://raw/base/`',
      },
    ]);
  });

  it('an unknown integration is an error at spec.integration, with a suggestion', async () => {
    const ds = source('a', 'rew', 'A', 's3://raw/x');
    const set = await load({ 'store.yaml': store('raw', 's3://raw'), 'ds.yaml': ds });
    expect(errs(set)).toEqual([
      expect.objectContaining({ file: 'ds.yaml', ...at(ds, 'rew'), message: expect.stringMatching(/^no Integration manifest named `rew`.*\(did you mean `raw`\?\)$/) }),
    ]);
  });

  it('an integration of another kind is an error', async () => {
    const lake = 'apiVersion: govops/v1\nkind: Integration\nmetadata:\n  name: lake\nspec:\n  type: distributed_sql\n';
    const ds = source('a', 'lake', 'A', 's3://raw/x');
    const set = await load({ 'lake.yaml': lake, 'ds.yaml': ds });
    expect(errs(set)).toEqual([expect.objectContaining({ ...at(ds, 'lake'), message: expect.stringMatching(/is a distributed_sql integration: data sources are registered under object_store integrations only/) })]);
  });

  it('the same prefix twice under one integration, and one name twice, are errors naming the first', async () => {
    const text = [source('a', 'raw', 'A', 's3://raw/x'), source('b', 'raw', 'B', 's3://raw/x'), source('c', 'raw', 'A', 's3://raw/y')].join('---\n');
    const set = await load({ 'store.yaml': store('raw', 's3://raw'), 'ds.yaml': text });
    expect(errs(set)).toEqual([
      expect.objectContaining({ ...at(text, 's3://raw/x', 1), name: 'b', message: expect.stringMatching(/^prefix `s3:\/\/raw\/x` of Integration\/raw is also registered by DataSource\/a at ds\.yaml:1:1/) }),
      expect.objectContaining({ ...at(text, 'A\n  prefix: s3://raw/y'), name: 'c', message: expect.stringMatching(/^dataSourceName `A` is also used by DataSource\/a at ds\.yaml:1:1: data source names are unique per integration$/) }),
    ]);
  });

  it('the same name under two integrations is fine', async () => {
    const set = await load({
      'stores.yaml': [store('raw', 's3://raw'), store('cur', 's3://cur')].join('---\n'),
      'ds.yaml': [source('a', 'raw', 'A', 's3://raw/x'), source('b', 'cur', 'A', 's3://cur/x')].join('---\n'),
    });
    expect(set.diagnostics).toEqual([]);
  });

  it('a cloudLocationPath given as a secret reference is not checked offline', async () => {
    const text = store('raw', 'x').replace('cloudLocationPath: x', 'cloudLocationPath: { fromEnv: GOVOPS_SECRET_LOC }');
    const set = await load({ 'store.yaml': text, 'ds.yaml': source('a', 'raw', 'A', 's3://anything') });
    expect(errs(set)).toEqual([]);
  });
});
