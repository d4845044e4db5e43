// A pass needs a judged check: reaching the server is not one. Tests registered here
// through clause() itself (the harness every suite test uses), on answers made up in
// memory (no request leaves the process): one whose only contact with the answer is
// responded() or json() cannot pass, it ends `inconclusive` saying it judged nothing;
// one status compared, one media type, one observation of an INFO clause is a judgement.
// The test with no request and no check at all is an `error` (a defect of the test):
// unjudgedOutcome() says so here, selftest/e2e/harness-errors.test.ts shows it in a run.
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../lib/http/http-client.ts';
import type { TestRecord } from '../../lib/run/verdicts.ts';

// harness/target.ts reads the run's configuration at import: any base URL will do, none is reached.
const before = { TARGET_URL: process.env.TARGET_URL, API_KEY: process.env.API_KEY };
process.env.TARGET_URL = 'http://127.0.0.1:9/v1';
process.env.API_KEY = 'sk-evidence-rule-unit-0000000000';
const { clause, unjudgedOutcome } = await import('../../harness/clause-test.ts');
for (const [k, v] of Object.entries(before)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }

function answer(status: number, body: unknown = { ok: true }, mediaType = 'application/json'): Exchange {
  const text = JSON.stringify(body);
  return {
    seq: 0, request: { method: 'GET', url: 'http://127.0.0.1:9/v1/models', headers: {} }, status,
    headers: { 'content-type': mediaType }, mediaType, text, json: body, durationMs: 1, wireBytes: text.length,
    retries: [], keyEchoes: [], curl: 'curl http://127.0.0.1:9/v1/models',
  };
}

const CASES: Array<[id: string, what: string, expected: TestRecord['verdict'], checks: number]> = [
  ['selftest/evidence/responded-only', 'responded() alone', 'inconclusive', 0],
  ['selftest/evidence/responded-and-json', 'responded() and json() on a 200', 'inconclusive', 0],
  ['selftest/evidence/responded-should', 'responded() alone at SHOULD level', 'inconclusive', 0],
  ['selftest/evidence/status', 'status(ex, 200) on a 200', 'pass', 1],
  ['selftest/evidence/media-type', 'mediaType(ex, application/json)', 'pass', 1],
  ['selftest/evidence/observe-info', 'an INFO clause observing what it saw', 'info', 1],
];

describe('tests registered through clause()', () => {
  clause(CASES[0]![0], 'SVC-2', `self-test: ${CASES[0]![1]}`, async (t) => { t.responded(answer(200)); });
  clause(CASES[1]![0], 'SVC-2', `self-test: ${CASES[1]![1]}`, async (t) => { const ex = answer(200, { data: [] }); t.responded(ex); t.json(ex); });
  clause(CASES[2]![0], 'EV-8', `self-test: ${CASES[2]![1]}`, async (t) => { t.responded(answer(200)); });
  clause(CASES[3]![0], 'SVC-2', `self-test: ${CASES[3]![1]}`, async (t) => { t.status(answer(200), 200); });
  clause(CASES[4]![0], 'MOD-2', `self-test: ${CASES[4]![1]}`, async (t) => { t.mediaType(answer(200), 'application/json'); });
  clause(CASES[5]![0], 'SVC-7', `self-test: ${CASES[5]![1]}`, async (t) => { t.observe('preflight answered HTTP 204'); });
});

describe('their verdicts', () => {
  it('reaching the server is no pass: a test whose only contact was responded() or json() is inconclusive, saying it judged nothing', ({ task }) => {
    const records = new Map(task.file.tasks.flatMap((s) => ('tasks' in s ? s.tasks : [])).map((x) => [x.meta.chatgate?.id, x.meta.chatgate]));
    for (const [id, what, verdict, checks] of CASES) {
      const rec = records.get(id);
      expect(rec, id).toBeDefined();
      expect(`${what}: ${rec!.verdict}, ${rec!.checks} checks`).toBe(`${what}: ${verdict}, ${checks} checks`);
      if (verdict === 'inconclusive') expect(rec!.message).toMatch(/^the target answered \(1 response reached\) but the test judged nothing in what it answered/);
    }
  });

  it('the rule itself: judged checks decide; no request and no check is a defect of the test', () => {
    expect(unjudgedOutcome(1, 0)).toBeUndefined();
    expect(unjudgedOutcome(2, 5)).toBeUndefined();
    expect(unjudgedOutcome(0, 0)).toBe('error');
    expect(unjudgedOutcome(0, 3)).toMatch(/3 responses reached.*judged nothing.*reaching the server is no pass/);
  });
});
