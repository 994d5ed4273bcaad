import { describe, expect, it } from 'vitest';
import { Redactor } from '../../src/util/redact.js';
import { redactSecretShapes } from '../../src/util/secret-patterns.js';
import { declareSecrets, SecretRedactor, secretsFromEnv } from '../../src/util/secrets.js';

describe('secret shapes are redacted without knowing the value', () => {
  it.each([
    ['a database URL', 'postgres://app:hunter2pw@db:5432/app', 'postgres://[REDACTED]@db:5432/app'],
    ['a Redis URL with only a password', 'redis://:s3cretpass@cache:6379/0', 'redis://[REDACTED]@cache:6379/0'],
    ['a Sentry DSN', 'https://0123abcd@o1.ingest.sentry.io/7', 'https://[REDACTED]@o1.ingest.sentry.io/7'],
    ['an OpenAI key', 'key sk-proj-abcdefghijklmnopqrstuvwx', 'key [REDACTED]'],
    ['an Anthropic key', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz', '[REDACTED]'],
    ['a GitHub token', `ghp_${'a1'.repeat(18)}`, '[REDACTED]'],
    ['a fine-grained GitHub token', `github_pat_11${'B'.repeat(30)}`, '[REDACTED]'],
    ['a Slack token', 'xoxb-1234567890-abcdefghij', '[REDACTED]'],
    ['an AWS access key', 'id AKIAIOSFODNN7EXAMPLE here', 'id [REDACTED] here'],
    ['a bearer header', 'Authorization: Bearer abcdefghijklmnop1234', 'Authorization: Bearer [REDACTED]'],
    [
      'a private key',
      '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----',
      '[REDACTED]',
    ],
  ])('%s', (_name, text, expected) => {
    expect(redactSecretShapes(text)).toBe(expected);
  });

  it('leaves ordinary text alone', () => {
    const text = 'https://example.com/a@b risk-assessment task-sk-1 mailto:me@example.com skills ghp_short';
    expect(redactSecretShapes(text)).toBe(text);
  });
});

describe('Redactor', () => {
  it('returns data without secrets as the same object, and copies only the path to a secret', () => {
    const redactor = new Redactor({ exact: ['opaque-value-123'] });
    const clean = { a: [1, 'x'], b: { c: 'y' } };
    expect(redactor.data(clean)).toBe(clean);
    const dirty = { keep: { c: 'y' }, list: ['ok', 'has opaque-value-123'] };
    const redacted = redactor.data(dirty);
    expect(redacted).not.toBe(dirty);
    expect(redacted.keep).toBe(dirty.keep);
    expect(redacted.list).toEqual(['ok', 'has [REDACTED]']);
    expect(dirty.list[1]).toBe('has opaque-value-123');
  });

  it('matches credentials by long fragments, exact values only whole', () => {
    const redactor = new Redactor({ credentials: ['cred-0123456789abcdefgh'], exact: ['/opt/some/long/value/path'] });
    expect(redactor.text('tail 0123456789abcdefgh')).toBe('tail [REDACTED]');
    expect(redactor.text('/opt/some/long/other')).toBe('/opt/some/long/other');
    expect(redactor.text('at /opt/some/long/value/path')).toBe('at [REDACTED]');
  });

  // Every event of every run is redacted for the event log: its keys and short values repeat across events.
  it('redacts a short text it has seen before without running its patterns again, with the same result', () => {
    const redactor = new Redactor({ credentials: ['cred-0123456789abcdefgh'], exact: ['opaque-value-123'] });
    const event = {
      type: 'tool-result',
      runId: 'run-1',
      scope: 'st-1',
      note: 'opaque-value-123',
      key: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
    };
    const first = redactor.data(event);
    expect(first).toEqual({ ...event, note: '[REDACTED]', key: '[REDACTED]' });
    let patternRuns = 0;
    const { test, exec } = RegExp.prototype;
    RegExp.prototype.test = function (this: RegExp, text: string) {
      patternRuns += 1;
      return test.call(this, text);
    };
    RegExp.prototype.exec = function (this: RegExp, text: string) {
      patternRuns += 1;
      return exec.call(this, text);
    };
    try {
      expect(redactor.data(event)).toEqual(first);
    } finally {
      Object.assign(RegExp.prototype, { test, exec });
    }
    expect(patternRuns).toBe(0);
    // A long text is redacted afresh each time (it is not remembered), still correctly.
    const long = `${'x'.repeat(200)} opaque-value-123`;
    expect(redactor.text(long)).toBe(`${'x'.repeat(200)} [REDACTED]`);
    expect(redactor.text(long)).toBe(`${'x'.repeat(200)} [REDACTED]`);
  });
});

describe('secrets the harness knows', () => {
  it('takes secret-named variables by value, whatever the naming convention', () => {
    const env = {
      PGPASS: 'pg-secret-1',
      DB_PASS: 'db-secret-2',
      DB_PWD: 'db-secret-3',
      GITHUB_PAT: 'pat-value-4',
      SENTRY_DSN: 'dsn-value-5',
      PATH: '/usr/bin:/bin',
      PWD: '/home/someone/project',
      FEATURE_TOKEN_ENABLED: 'disabled',
      API_KEY: 'short',
    };
    expect(secretsFromEnv(env).sort()).toEqual(
      ['pg-secret-1', 'db-secret-2', 'db-secret-3', 'pat-value-4', 'dsn-value-5'].sort(),
    );
  });

  it('follows what an owner declares, and forgets nothing it still declares', () => {
    const owner = {};
    let current = 'first-declared-secret';
    declareSecrets(owner, () => [current], 'value');
    const redactor = new SecretRedactor({ owners: () => [owner], env: {} });
    expect(redactor.text('a first-declared-secret b')).toBe('a [REDACTED] b');
    current = 'second-declared-secret';
    expect(redactor.text('a second-declared-secret b')).toBe('a [REDACTED] b');
  });
});
