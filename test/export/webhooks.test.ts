import { describe, expect, it } from 'vitest';
import type { LiveWebhook } from '../../src/api/types.js';
import { exportResources, warningsFor } from '../../src/export/resources.js';
import { renderExport } from '../../src/export/write.js';
import { parseManifestText } from '../../src/manifests/parse.js';
import { configShapes } from '../../src/manifests/shapes.js';

const hook = (id: number, name: string, actionType?: string | null): LiveWebhook => ({
  id: String(id),
  name,
  url: `https://hooks.example.com/${name}`,
  notificationType: ['userCreated'],
  global: false,
  ...(actionType !== undefined ? { actionType } : {}),
  createdBy: 1,
});

const run = (webhooks: LiveWebhook[]) =>
  exportResources({ integrations: [], webhooks, shapes: configShapes(), envPrefix: 'GOVOPS_SECRET_' });

describe('export of webhooks without actionType (the interface lets records leave it null)', () => {
  it('one warning for all of them, naming a few, not one per webhook', () => {
    const names = Array.from({ length: 8 }, (_, i) => `hook-${i}`);
    const out = run(names.map((n, i) => hook(i + 1, n, i % 2 === 0 ? null : undefined)));
    expect(out.resources).toHaveLength(8);
    for (const r of out.resources) expect((r.manifest.spec as { actionType: string }).actionType).toBe('triggered');
    expect(warningsFor(out)).toEqual([
      '8 webhooks exported with actionType triggered: the service does not return their actionType (hook-0, hook-1, hook-2, hook-3, hook-4, and 3 more); check it where a webhook receives',
    ]);
  });

  it('no warning when the service says the actionType; receive is kept', () => {
    const out = run([hook(1, 'a', 'receive'), hook(2, 'b', 'triggered')]);
    expect(warningsFor(out)).toEqual([]);
    expect(out.resources.map((r) => (r.manifest.spec as { actionType: string }).actionType)).toEqual(['receive', 'triggered']);
  });

  it('the warning names only the webhooks a selection writes, and none when it writes none (export --select)', () => {
    const out = run([hook(1, 'a', null), hook(2, 'b', null)]);
    expect(warningsFor(out, (r) => r === 'Webhook/b')).toEqual([
      '1 webhook exported with actionType triggered: the service does not return its actionType (b); check it where a webhook receives',
    ]);
    expect(warningsFor(out, (r) => r.startsWith('Integration/'))).toEqual([]);
  });
});

describe('export of a webhook whose events repeat', () => {
  it('writes each event once (the list is a set; validate --strict refuses a repeat), sorted', () => {
    const out = run([{ ...hook(1, 'a', 'triggered'), notificationType: ['userCreated', 'modelCreated', 'userCreated'] }]);
    expect((out.resources[0]!.manifest.spec as { notificationType: string[] }).notificationType).toEqual(['modelCreated', 'userCreated']);
  });
});

describe('export of a webhook whose url carries a credential', () => {
  it('leaves it out with a warning (a url cannot be a secret reference), a token alone as userinfo too; a plain query is exported', () => {
    const out = run([
      { ...hook(1, 'userinfo', 'triggered'), url: 'https://bob:canary-pw@hooks.example.com/x' },
      { ...hook(2, 'query-token', 'triggered'), url: 'https://hooks.example.com/x?a=1&token=canary-token' },
      { ...hook(3, 'plain', 'triggered'), url: 'https://hooks.example.com/x?a=1' },
      // Basic auth with the token as the user name: a callback's userinfo has no other use.
      { ...hook(4, 'bare-token', 'triggered'), url: 'https://canary0token0abc@hooks.example.com/x' },
    ]);
    expect(out.resources.map((r) => r.name)).toEqual(['plain']);
    expect(JSON.stringify(out.resources)).not.toContain('canary');
    const warnings = warningsFor(out);
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/^webhook userinfo \(id 1\) not exported: its url carries a credential/);
    expect(warnings[1]).toMatch(/^webhook query-token \(id 2\) not exported: its url carries a credential/);
    expect(warnings[2]).toMatch(/^webhook bare-token \(id 4\) not exported: its url carries a credential/);
    for (const w of warnings) expect(w).not.toContain('canary');
  });
});

describe('export of a chat webhook whose url is its credential (the token in its path)', () => {
  const TOKEN = 'canaryTOKEN1234abcd5678';
  const slack = `https://hooks.slack.com/services/T00000000/B00000000/${TOKEN}`;
  const discord = `https://discord.com/api/webhooks/123456789012345678/${TOKEN}`;

  it('writes it as it is (there is nowhere else to put the token), and says so on stderr and in the file', () => {
    const out = run([
      { ...hook(1, 'slack', 'triggered'), url: slack },
      { ...hook(2, 'discord', 'triggered'), url: discord },
      hook(3, 'plain', 'triggered'),
    ]);
    expect(out.resources.map((r) => [r.name, (r.manifest.spec as { url: string }).url])).toEqual([
      ['slack', slack],
      ['discord', discord],
      ['plain', 'https://hooks.example.com/plain'],
    ]);
    const warnings = warningsFor(out);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/^Webhook\/slack \(id 1\) url: written as it is: its path holds a token/);
    expect(warnings[1]).toMatch(/^Webhook\/discord \(id 2\) url: written as it is/);
    for (const w of warnings) expect(w).not.toContain(TOKEN);
    // only the webhooks a selection writes
    expect(warningsFor(out, (r) => r === 'Webhook/plain')).toEqual([]);

    const files = renderExport(out.resources, out.variables, 'resource');
    const text = files.get('webhook-slack.yaml')!;
    expect(text).toMatch(/^# Webhook\/slack: exported by govops export \(live id 1\)\n# Its url is its credential/);
    expect(files.get('webhook-plain.yaml')).not.toContain('credential');
    // the comment changes nothing that is read: the manifest is the webhook as it is
    const parsed = parseManifestText(text, 'webhook-slack.yaml', '.').manifests;
    expect(parsed.map((m) => (m.manifest.spec as { url: string }).url)).toEqual([slack]);
    const kind = renderExport(out.resources, out.variables, 'kind').get('webhooks.yaml')!;
    expect(kind.match(/# Its url is its credential/g)).toHaveLength(2);
  });
});

describe('export of a webhook whose name is not a manifest name (the service allows any string)', () => {
  it('is written with a sanitised metadata.name and its name as spec.name; a valid name keeps itself and has no spec.name', () => {
    const out = run([hook(1, 'Slack Alerts', 'triggered'), hook(2, 'slack-alerts', 'triggered'), hook(3, 'team_a.alerts', 'triggered'), hook(4, 'plain', 'triggered')]);
    expect(warningsFor(out)).toEqual([]);
    const byId = new Map(out.resources.map((r) => [r.liveId, r]));
    expect(byId.get('2')!.name).toBe('slack-alerts');
    expect(byId.get('2')!.manifest.spec).not.toHaveProperty('name');
    expect(byId.get('1')!.name).toMatch(/^slack-alerts-[0-9a-f]{6}$/);
    expect((byId.get('1')!.manifest.spec as { name?: string }).name).toBe('Slack Alerts');
    expect(byId.get('3')!.name).toBe('team-a-alerts');
    expect((byId.get('3')!.manifest.spec as { name?: string }).name).toBe('team_a.alerts');
    expect(byId.get('4')!.manifest).toEqual({
      apiVersion: 'govops/v1',
      kind: 'Webhook',
      metadata: { name: 'plain' },
      spec: { url: 'https://hooks.example.com/plain', global: false, notificationType: ['userCreated'], actionType: 'triggered' },
    });
    // the identity recorded (export --state) is the name in the service
    expect(byId.get('1')!.identity).toContain('Slack Alerts');
  });

  it('the same names in any list order', () => {
    const hooks = [hook(1, 'Slack Alerts', 'triggered'), hook(2, 'slack-alerts', 'triggered'), hook(3, 'SLACK alerts', 'triggered')];
    const names = (list: LiveWebhook[]) => new Map(run(list).resources.map((r) => [r.liveId, r.name]));
    expect(names([...hooks].reverse())).toEqual(names(hooks));
  });

  it('an empty name, which spec.name cannot hold, is not exported (a warning)', () => {
    const out = run([hook(1, '', 'triggered')]);
    expect(out.resources).toEqual([]);
    expect(warningsFor(out)).toEqual(['webhook (id 1) not exported: its name is empty, which a manifest cannot give (spec.name is a non-empty string)']);
  });
});
