// Every test of the suite has a stable id (given at the test, harness/clause-test.ts),
// in the id scheme (TEST_ID: "<suite file>/<slug>...") and unique, so EXPECTATIONS
// entries and history survive a title edit. The ids come from the runner's own
// collection (npm test -- --list-tests: imports only, no request); a suite file that
// does not load there is a crash naming it, never a list without its tests.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TEST_ID, idPart } from '../../lib/run/test-ids.ts';
import { ROOT } from '../support/run-suite.ts';

describe('stable test ids', () => {
  it('every test has one, in the scheme, unique, and its first segment names its suite file', () => {
    const run = spawnSync(process.execPath, [join(ROOT, 'bin/chatgate.mjs'), '--list-tests'], {
      cwd: ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME }, timeout: 120_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const rows = run.stdout.trim().split('\n').map((l) => l.split('\t') as [string, string, string?]);
    expect(rows.length).toBeGreaterThan(150);
    const bad = rows.filter(([id]) => !TEST_ID.test(id)).map(([id, title]) => `${id} (${title})`);
    expect(bad, 'tests without a stable id (clause(id, clauseId, title, fn))').toEqual([]);
    const seen = new Map<string, string>();
    const dup: string[] = [];
    for (const [id, title] of rows) { if (seen.has(id)) dup.push(`${id}: "${seen.get(id)}" and "${title}"`); seen.set(id, title); }
    expect(dup).toEqual([]);
    const areas = new Set(rows.map(([id]) => id.split('/')[0]));
    for (const area of ['auth', 'brains', 'chat-requests', 'events', 'limits', 'models', 'resources', 'svc', 'unavailable', 'versioning', 'fuzz', 'clients', 'run-wide']) expect(areas).toContain(area);
    // Forms as metadata (clause()'s `stream`): the harness names each streaming twin after
    // its probe, and a probe declared without one says why.
    const titles = new Map(rows.map(([id, title]) => [id, title]));
    const twins = rows.filter(([id]) => /^(auth|chat-requests)\/.*-stream$/.test(id) && titles.has(id.replace(/-stream$/, '')));
    expect(twins.length).toBeGreaterThan(50);
    for (const [id, title] of twins) expect(title, id).toBe(`${titles.get(id.replace(/-stream$/, ''))} (stream: true)`);
    const none = new Map(rows.filter(([, , why]) => why).map(([id, , why]) => [id, why]));
    expect(none.get('auth/missing-key/models')).toMatch(/^\(no streaming form: GET \/models has no body/);
    expect(none.get('chat-requests/invalid/stream-string')).toMatch(/^\(no streaming form: stream itself is the field under test\)$/);
    expect(none.has('chat-requests/invalid/no-model')).toBe(false);
  }, 150_000);

  it('a suite file that does not load while the tests are collected is a crash naming it (exit 3), not a shorter list', () => {
    // The crashing fixture comes in through the self-test seam (docs/RUNNER.md).
    const run = spawnSync(process.execPath, [join(ROOT, 'bin/chatgate.mjs'), '--list-tests'], {
      cwd: ROOT, encoding: 'utf8', timeout: 300_000, // a hang guard: 62 s in CI at load average 15
      env: { PATH: process.env.PATH, HOME: process.env.HOME, CHATGATE_SELFTEST_SUITES: 'selftest/fixtures/harness-errors' },
    });
    expect(run.status, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/the runner crashed .*selftest\/fixtures\/harness-errors\/crashing-file\.suite\.ts does not load while the tests are collected: self-test: this suite file crashes on import/);
  }, 360_000);

  it('idPart turns a data label into an id segment', () => {
    expect(idPart('POST /chat/completions')).toBe('post-chat-completions');
    expect(idPart('/images/generations')).toBe('images-generations');
    expect(idPart('svc-auto')).toBe('svc-auto');
    expect(TEST_ID.test('auth/missing-key/models')).toBe(true);
    expect(TEST_ID.test('clients/openai@6/error-401')).toBe(true);
    expect(TEST_ID.test('auth/AUTH-1 no key on GET /models')).toBe(false);
    expect(TEST_ID.test('auth')).toBe(false);
  });
});
