// One rule for how a failed request is filed: the recorder's findings and the rehearsal's
// damage report name the same clause for the same outcome. A 200 stream that began and
// was cut (a lost connection or no data: [DONE]) is EV-6; no response at all is LIM-1.
import { describe, expect, it } from 'vitest';
import { classifyLoss } from '../../load/report/damage.ts';
import { failureClause, outcomeFailureClause, Recorder } from '../../load/engine/recorder.ts';
import { Findings } from '../../load/report/findings.ts';
import { GapTally } from '../../load/engine/histogram.ts';
import type { Outcome } from '../../load/engine/lean-client.ts';

function outcome(p: Partial<Outcome>): Outcome {
  return { seq: 0, route: 'chat', key: 'main', stream: true, intendedAt: 0, sentAt: 0, endAt: 0, contentChunks: 0, tokenEvents: 0, outputChars: 0, gaps: new GapTally(), events: 0, ok: false, schemaChecked: false, ...p };
}

/** The clauses the recorder files for one outcome outside a rehearsal. */
function recorded(o: Outcome): string[] {
  const f = new Findings();
  new Recorder(o.stream, f, 0).recordOutcome(o);
  return f.list().map((x) => x.clause);
}

const CASES: Array<[string, Partial<Outcome>, string]> = [
  ['200 stream cut by a reset after 7 events', { status: 200, failure: 'reset', failureDetail: 'socket closed', events: 7 }, 'EV-6'],
  ['200 stream ended without [DONE]', { status: 200, failure: 'incomplete_stream', failureDetail: 'no [DONE]', events: 3 }, 'EV-6'],
  ['connection dropped before any response', { failure: 'dropped', failureDetail: 'socket closed' }, 'LIM-1'],
  ['connection lost with no status (stream asked)', { failure: 'reset', failureDetail: 'socket closed' }, 'LIM-1'],
  ['plain 200 body cut by a reset', { stream: false, status: 200, failure: 'reset', failureDetail: 'socket closed' }, 'LIM-1'],
];

describe('a failed request is filed on one clause by the recorder and the rehearsal', () => {
  it.each(CASES)('%s', (_name, p, clause) => {
    const o = outcome(p);
    expect(classifyLoss(o)!.clause).toBe(clause);
    expect(recorded(o)).toEqual([clause]);
    expect(outcomeFailureClause(o)!.id).toBe(clause);
  });

  it('the kind alone (the recorder\'s old rule) files a cut 200 stream under LIM-1, which the rehearsal does not', () => {
    const cut = outcome(CASES[0]![1]);
    expect(failureClause(cut.failure!, cut.failureDetail!)!.id).toBe('LIM-1');
    expect(classifyLoss(cut)!.clause).not.toBe('LIM-1');
  });
});
