// The slice charts' drawer (load/report/slice-charts.ts, shared by rehearsal and merged k6
// pages): a line equal to a later one at every point is hidden under it, and the legend
// says so; lines that differ anywhere get no such note. The y axis runs from 0 to a round
// top at or above the data in round steps, counts in whole numbers, every label within the margin.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { esc, sliceChart, slicePoints } from '../../load/report/slice-charts.ts';

const rows = [{ t_start_s: 0, t_end_s: 5, a: 3, b: 3, c: 0 }, { t_start_s: 5, t_end_s: 10, a: 4, b: 4, c: 1 }];
const frame = { phases: [], marks: [] };
const series = (pickB: (r: (typeof rows)[number]) => number) => [
  { label: 'sent', pts: slicePoints(rows, (r) => r.a), color: '#1f77b4' },
  { label: 'ok', pts: slicePoints(rows, pickB), color: '#2ca02c' },
  { label: 'failed', pts: slicePoints(rows, (r) => r.c), color: '#d62728' },
];

/** The y tick labels of a chart: the numbers written right-aligned against the axis. */
function yLabels(svg: string): string[] {
  return [...svg.matchAll(/<text[^>]*text-anchor="end"[^>]*>([-\d.]+(?:e[-+]\d+)?[kM]?)<\/text>/g)].map((m) => m[1]!);
}
const value = (label: string) => Number(label.replace(/[kM]$/, '')) * (label.endsWith('M') ? 1e6 : label.endsWith('k') ? 1e3 : 1);
/** 1, 2, 2.5 or 5 times a power of ten. */
const nice = (v: number) => [1, 2, 2.5, 5].some((m) => Math.abs(v / 10 ** Math.floor(Math.log10(v)) - m) < 1e-6);
/** The margin left of the axis holds 52 px; a 10 px label takes at most about 6.2 px a character. */
const MAX_LABEL_CHARS = 8;

function axisOf(ys: number[]): number[] {
  const spans = ys.map((_, i) => ({ t_start_s: 5 * i, t_end_s: 5 * i + 5, y: ys[i]! }));
  const labels = yLabels(sliceChart('TTFT per slice (ms)', [{ label: 'p95', pts: slicePoints(spans, (r) => r.y), color: '#d62728' }], frame, spans));
  for (const l of labels) expect(l.length, `label ${l}`).toBeLessThanOrEqual(MAX_LABEL_CHARS);
  return labels.map(value);
}

describe('slice charts', () => {
  it('names a line drawn under an equal later one, and only then', () => {
    expect(sliceChart('Streams', series((r) => r.b), frame, rows)).toContain('sent (= ok, under it)');
    const differs = sliceChart('Streams', series((r) => r.b - r.c), frame, rows);
    expect(differs).not.toContain('under it');
  });

  it('a line lying on earlier ones is dashed, each such line on its own part of the pattern, and the legend says so; apart lines stay solid', () => {
    const spans = [0, 1, 2, 3].map((i) => ({ t_start_s: 5 * i, t_end_s: 5 * i + 5, p50: [5, 880, 860, 4][i]!, p95: [18, 991, 995, 11][i]!, p99: [18, 991, 995, 15][i]! }));
    const svg = sliceChart('TTFT per slice (ms)', [
      { label: 'p50', pts: slicePoints(spans, (r) => r.p50), color: '#1f77b4' },
      { label: 'p95', pts: slicePoints(spans, (r) => r.p95), color: '#d62728' },
      { label: 'p99', pts: slicePoints(spans, (r) => r.p99), color: '#ff7f0e' },
    ], frame, spans);
    const paths = [...svg.matchAll(/<path [^>]*stroke="(#[0-9a-f]+)"[^>]*>/g)].map((m) => ({ color: m[1], dash: /stroke-dasharray/.test(m[0]), offset: /stroke-dashoffset="(\d+)"/.exec(m[0])?.[1] }));
    expect(paths.map((p) => [p.color, p.dash])).toEqual([['#1f77b4', false], ['#d62728', true], ['#ff7f0e', true]]);
    expect(paths[1]!.offset).not.toBe(paths[2]!.offset);
    expect(svg).toContain('p95, dashed');
    expect(svg).toContain('p99, dashed');
    const apart = sliceChart('Streams', [{ label: 'sent', pts: slicePoints(rows, (r) => 10 * r.a), color: '#1f77b4' }, { label: 'failed', pts: slicePoints(rows, (r) => r.c), color: '#d62728' }], frame, rows);
    expect(apart).not.toContain('stroke-dasharray="5,10"');
    expect(apart).not.toContain('dashed');
  });

  it('a long change label keeps its head and its tail (what tells changes apart), the whole in a tooltip; labels sit above the plot', () => {
    const cmd = 'curl -sS -X POST "$CHATGATE_REF_CONTROL/engine/slots?n=2&seconds=15"';
    const svg = sliceChart('Requests', series((r) => r.b), { phases: [{ phase: 'hold 10s', start_s: 0 }], marks: [{ t_s: 4, label: cmd }] }, rows);
    const label = />(change: [^<]*)</.exec(svg)![1]!.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
    expect(label.startsWith('change: curl -sS')).toBe(true);
    expect(label.endsWith('seconds=15"')).toBe(true);
    expect(label.length).toBeLessThanOrEqual('change: '.length + 56);
    expect(svg).toContain(`<title>${esc(`change at 4 s: ${cmd}`)}</title>`);
    // Every label's baseline is above the plot's top (the highest y tick).
    const plotTop = Math.min(...[...svg.matchAll(/<line x1="56" x2="888" y1="([\d.]+)"/g)].map((m) => Number(m[1])));
    const baselines = [...svg.matchAll(/<text x="[\d.]+" y="([\d.]+)" font-size="10" fill="#(?:888|d62728)">/g)].map((m) => Number(m[1]));
    expect(baselines).toHaveLength(2);
    expect(Number.isFinite(plotTop)).toBe(true);
    for (const y of baselines) expect(y).toBeLessThan(plotTop);
  });

  it('y ticks are round: 0 to a round top at or above the highest point, in steps of 1, 2, 2.5 or 5 times a power of ten', () => {
    expect(axisOf([120.5, 374.7, 90])).toEqual([0, 100, 200, 300, 400]);
    expect(axisOf([0.12, 0.64, 0])).toEqual([0, 0.25, 0.5, 0.75]);
  });

  it('counts get whole-number ticks, however small', () => {
    expect(axisOf([1, 3, 2])).toEqual([0, 1, 2, 3]);
    expect(axisOf([0, 1, 0])).toEqual([0, 1]);
    expect(axisOf([0, 0, 0])).toEqual([0, 1]);
  });

  it('for any data: a round top at or above it, round steps, labels within the margin, whole numbers for counts', () => {
    const data = fc.oneof(
      // Slice figures are 0 or at least 1e-6 (shares are kept to six decimals).
      fc.array(fc.oneof(fc.constant(0), fc.double({ min: 1e-6, max: 5e7, noNaN: true })), { minLength: 1, maxLength: 12 }),
      fc.array(fc.nat({ max: 200_000 }), { minLength: 1, maxLength: 12 }),
    );
    fc.assert(fc.property(data, (ys) => {
      const ticks = axisOf(ys);
      const top = ticks[ticks.length - 1]!;
      const step = ticks[1]! - ticks[0]!;
      expect(ticks[0]).toBe(0);
      expect(top).toBeGreaterThanOrEqual(Math.max(...ys) * (1 - 1e-9));
      expect(nice(step), `step ${step} of ${ticks.join(',')}`).toBe(true);
      expect(ticks.length).toBeLessThanOrEqual(6);
      if (ys.every(Number.isInteger)) expect(ticks.every(Number.isInteger), ticks.join(',')).toBe(true);
    }), { numRuns: 300, seed: 7 });
  });
});
