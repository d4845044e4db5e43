// The expectations file (lib/run/expectations.ts): JSON and YAML maps of known failures,
// rejected with one line when an id names nothing or a reason is missing; a known
// failure is "expected fail", a known failure that passes is "unexpected pass";
// --update-expectations removes those entries and keeps the rest of the file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../lib/run/config.ts';
import { applyExpectations, checkTestIds, isNamed, loadExpectations, removeEntries } from '../../lib/run/expectations.ts';
import { CLAUSES } from '../../lib/spec/clauses.ts';
import type { TestRecord, Verdict } from '../../lib/run/verdicts.ts';

const dir = mkdtempSync(join(tmpdir(), 'chatgate-expectations-'));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}
function configError(fn: () => unknown): string {
  try { fn(); } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error('no ConfigError');
}
const rec = (clause: keyof typeof CLAUSES, title: string, verdict: Verdict): TestRecord => ({
  id: `suite/${clause} ${title}`, clause, level: CLAUSES[clause].level, verdict, title: `${clause} ${title}`, requirement: '', notes: [],
});

const YAML_TEXT = `# known failures of staging
LIM-2: https://tracker.example/API-88 no Retry-After yet   # until the gateway upgrade
"resources/RES-CC-1 id is \\"chatcmpl-\\" followed by a suffix": https://tracker.example/API-91
EV-7: https://tracker.example/API-93
`;

describe('loading', () => {
  it('reads clause ids and test ids with their reasons, from YAML and JSON', () => {
    const y = loadExpectations(file('known.yaml', YAML_TEXT));
    expect(y.format).toBe('yaml');
    expect(y.entries).toEqual([
      { id: 'LIM-2', reason: 'https://tracker.example/API-88 no Retry-After yet' },
      { id: 'resources/RES-CC-1 id is "chatcmpl-" followed by a suffix', reason: 'https://tracker.example/API-91' },
      { id: 'EV-7', reason: 'https://tracker.example/API-93' },
    ]);
    const j = loadExpectations(file('known.json', JSON.stringify({ 'AUTH-1': 'https://tracker.example/API-1' })));
    expect(j).toMatchObject({ format: 'json', entries: [{ id: 'AUTH-1', reason: 'https://tracker.example/API-1' }] });
    expect(loadExpectations(file('empty.yaml', '# nothing known\n')).entries).toEqual([]);
  });

  it('rejects an unknown clause id, a missing reason, a bad shape or syntax, a missing file: one line each', () => {
    expect(configError(() => loadExpectations(file('u.yaml', 'NOPE-1: x\nAUTH-1: y\nLIM-99: z\n'))))
      .toMatch(/^EXPECTATIONS: .*u\.yaml: "NOPE-1", "LIM-99" are no clause id; use a clause id/);
    expect(configError(() => loadExpectations(file('r.yaml', 'AUTH-1:\nAUTH-2: ""\n')))).toMatch(/"AUTH-1", "AUTH-2" have no reason/);
    expect(configError(() => loadExpectations(file('l.yaml', '- AUTH-1\n')))).toMatch(/must map clause or test ids to reasons/);
    expect(configError(() => loadExpectations(file('b.json', '{"AUTH-1": ')))).toMatch(/is not valid JSON/);
    expect(configError(() => loadExpectations(file('b.yaml', 'AUTH-1: [\n')))).toMatch(/is not valid YAML/);
    expect(configError(() => loadExpectations(join(dir, 'missing.yaml')))).toMatch(/cannot read .*missing\.yaml \(ENOENT\)/);
  });

  it('accepts a stable test id, and an old title-based one with a deprecation warning naming its stable id', () => {
    const y = loadExpectations(file('stable.yaml', 'resources/completion-id: https://tracker.example/API-91\n"resources/RES-CC-2 object is \\"chat.completion\\"": https://tracker.example/API-92\n'));
    const warnings = checkTestIds(y, new Set(['resources/completion-id', 'resources/completion-object']), new Map([['resources/RES-CC-2 object is "chat.completion"', 'resources/completion-object']]));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/"resources\/RES-CC-2 object is \\"chat.completion\\"" is a title-based test id \(deprecated.*use its stable id "resources\/completion-object"/);
    const tests = [rec('RES-CC-1', 'id', 'fail'), rec('RES-CC-2', 'object', 'fail')];
    tests[0]!.id = 'resources/completion-id';
    tests[1]!.id = 'resources/completion-object';
    const summary = applyExpectations(y, tests);
    expect(summary.expectedFail).toBe(2);
    // The entry keeps the file's own key: --update-expectations removes what the file says.
    expect(tests[1]!.expectation?.entry).toBe('resources/RES-CC-2 object is "chat.completion"');
    expect(isNamed(y, tests[1]!)).toBe(true);
  });

  it('rejects a test id that names no test of the suite', () => {
    const y = loadExpectations(file('known2.yaml', YAML_TEXT));
    checkTestIds(y, new Set(['resources/RES-CC-1 id is "chatcmpl-" followed by a suffix']));
    expect(configError(() => checkTestIds(y, new Set(['resources/RES-CC-2 object']))))
      .toMatch(/"resources\/RES-CC-1 id is \\"chatcmpl-\\" followed by a suffix" is no test of the suite/);
  });
});

describe('judging', () => {
  const known = () => loadExpectations(file('j.yaml', YAML_TEXT));

  it('a known failure is an expected fail and does not count as unexpected', () => {
    const tests = [rec('EV-7', 'ids', 'warn'), rec('RES-CC-1', 'id is "chatcmpl-" followed by a suffix', 'fail')];
    tests[1]!.id = 'resources/RES-CC-1 id is "chatcmpl-" followed by a suffix';
    const s = applyExpectations(known(), tests);
    expect(tests.map((t) => t.expectation?.outcome)).toEqual(['expected-fail', 'expected-fail']);
    expect(tests[1]!.expectation).toEqual({ entry: tests[1]!.id, reason: 'https://tracker.example/API-91', outcome: 'expected-fail' });
    expect(s).toMatchObject({ expectedFail: 2, unexpectedPass: [], notRun: ['LIM-2'] });
    expect(isNamed(known(), tests[0]!)).toBe(true);
    expect(isNamed(known(), rec('AUTH-1', 'x', 'fail'))).toBe(false);
  });

  it('a known failure that passes is an unexpected pass', () => {
    const tests = [rec('LIM-2', 'retry headers', 'pass'), rec('EV-7', 'ids', 'pass'), rec('EV-7', 'other ids', 'pass')];
    const s = applyExpectations(known(), tests);
    expect(s.unexpectedPass).toEqual(['LIM-2', 'EV-7']);
    expect(tests.every((t) => t.expectation?.outcome === 'unexpected-pass')).toBe(true);
  });

  it('a clause fails when one of its tests fails: the others are no unexpected pass', () => {
    const tests = [rec('EV-7', 'a', 'pass'), rec('EV-7', 'b', 'warn')];
    const s = applyExpectations(known(), tests);
    expect(s.unexpectedPass).toEqual([]);
    expect(tests.map((t) => t.expectation?.outcome)).toEqual([undefined, 'expected-fail']);
  });

  it('skipped or inconclusive tests confirm nothing', () => {
    const tests = [rec('LIM-2', 'retry headers', 'inconclusive')];
    const s = applyExpectations(known(), tests);
    expect(s.unconfirmed).toEqual(['LIM-2']);
    expect(s.unexpectedPass).toEqual([]);
  });
});

describe('--update-expectations', () => {
  it('removes the entries that pass and keeps the rest of a YAML file, comments included', () => {
    const p = file('update.yaml', YAML_TEXT);
    removeEntries(loadExpectations(p), ['EV-7', 'resources/RES-CC-1 id is "chatcmpl-" followed by a suffix']);
    const text = readFileSync(p, 'utf8');
    expect(text).toContain('# known failures of staging');
    expect(text).toContain('LIM-2: https://tracker.example/API-88 no Retry-After yet # until the gateway upgrade');
    expect(text).not.toContain('EV-7');
    expect(text).not.toContain('RES-CC-1');
    expect(loadExpectations(p).entries.map((e) => e.id)).toEqual(['LIM-2']);
  });

  it('keeps the heading comment when the first entry goes, and empties the file when all go', () => {
    const p = file('first.yaml', YAML_TEXT);
    removeEntries(loadExpectations(p), ['LIM-2']);
    expect(readFileSync(p, 'utf8')).toMatch(/^# known failures of staging\n"resources\/RES-CC-1/);
    removeEntries(loadExpectations(p), ['EV-7', 'resources/RES-CC-1 id is "chatcmpl-" followed by a suffix']);
    expect(readFileSync(p, 'utf8')).toContain('# known failures of staging');
    expect(loadExpectations(p).entries).toEqual([]);
  });

  it('rewrites a JSON file as JSON', () => {
    const p = file('update.json', JSON.stringify({ 'AUTH-1': 'https://t/1', 'AUTH-2': 'https://t/2' }));
    removeEntries(loadExpectations(p), ['AUTH-1']);
    expect(JSON.parse(readFileSync(p, 'utf8'))).toEqual({ 'AUTH-2': 'https://t/2' });
  });
});
