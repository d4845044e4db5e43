// The slice charts' drawer (load/report/slice-charts.ts, shared by rehearsal and merged k6
// pages): a line equal to a later one at every point is hidden under it, and the legend
// says so; lines that differ anywhere get no such note.
import { describe, expect, it } from 'vitest';
import { sliceChart, slicePoints } from '../../load/report/slice-charts.ts';

const rows = [{ t_start_s: 0, t_end_s: 5, a: 3, b: 3, c: 0 }, { t_start_s: 5, t_end_s: 10, a: 4, b: 4, c: 1 }];
const frame = { phases: [], marks: [] };
const series = (pickB: (r: (typeof rows)[number]) => number) => [
  { label: 'sent', pts: slicePoints(rows, (r) => r.a), color: '#1f77b4' },
  { label: 'ok', pts: slicePoints(rows, pickB), color: '#2ca02c' },
  { label: 'failed', pts: slicePoints(rows, (r) => r.c), color: '#d62728' },
];

describe('slice charts', () => {
  it('names a line drawn under an equal later one, and only then', () => {
    expect(sliceChart('Streams', series((r) => r.b), frame, rows)).toContain('sent (= ok, under it)');
    const differs = sliceChart('Streams', series((r) => r.b - r.c), frame, rows);
    expect(differs).not.toContain('under it');
  });
});
