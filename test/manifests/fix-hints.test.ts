/**
 * A type error says how to fix it, at the value's `file:line:col`: a field written with nothing after its colon
 * (YAML reads it as null) and a single event where the webhook takes a list.
 */
import { describe, expect, it } from 'vitest';
import { parseManifestText } from '../../src/manifests/parse.js';

const errors = (text: string): string[] =>
  parseManifestText(text, 'm.yaml', '/tmp')
    .diagnostics.filter((d) => d.severity === 'error')
    .map((d) => `${d.file}:${d.line}:${d.column}: ${d.message}`);

describe('type errors say how to write the value', () => {
  it('an empty value (`connectArgs:`, YAML null) is named as empty, with the way out', () => {
    const out = errors(`apiVersion: govops/v1
kind: Integration
metadata: { name: sql }
spec:
  type: sql_analytics
  autoBootstrap: false
  config:
    host: sql.example.com
    database: d
    schema: s
    username: u
    password: { fromEnv: GOVOPS_SECRET_SQL }
    connectArgs:
`);
    expect(out).toEqual(['m.yaml:13:17: `spec.config.connectArgs` must be a string, not an empty value (nothing is written after `connectArgs:`: write the value, or leave the field out)']);
  });

  it('one event where a list is wanted: written as a list', () => {
    const out = errors(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec:
  url: https://example.com/hook
  global: false
  notificationType: modelCreated
  actionType: triggered
`);
    expect(out).toEqual(['m.yaml:7:21: `spec.notificationType` must be a list, not a string `modelCreated` (write it as a list: [modelCreated])']);
  });

  it('a webhook `name` in spec is its name in the service (any non-empty string); an empty one is refused', () => {
    const out = errors(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec:
  name: Slack Alerts
  url: https://example.com/hook
  global: false
  notificationType: [modelCreated]
  actionType: triggered
`);
    expect(out).toEqual([]);
    const empty = errors(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec:
  name: ""
  url: https://example.com/hook
  global: false
  notificationType: [modelCreated]
  actionType: triggered
`);
    expect(empty).toHaveLength(1);
    expect(empty[0]).toMatch(/^m\.yaml:5:9: .*must not be empty/);
  });

  it('a secret reference where none is read (a webhook url, a data source prefix): said so, with where they are read', () => {
    const out = errors(`apiVersion: govops/v1
kind: Webhook
metadata: { name: hook }
spec:
  url: { fromEnv: GOVOPS_SECRET_HOOK_URL }
  global: false
  notificationType: [modelCreated]
  actionType: triggered
`);
    expect(out).toEqual([
      'm.yaml:5:8: `spec.url` must be a string, not a secret reference (references are read only in spec.config, spec.deleteCredentials and a webhook\'s spec.secret: write the value itself here)',
    ]);
  });
});
