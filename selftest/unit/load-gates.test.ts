// SLO gates, absolute limits and the baseline's noise, on made-up summaries: what
// fails a run, what each line names, and which changes count as `same`.
import { describe, expect, it } from 'vitest';
import { evaluateGates, gateLine, parseLimits } from '../../load/report/gates.ts';
import { compareMetrics, parseThresholds, settingsDiffer } from '../../load/report/baseline.ts';
import { parseArgs, UsageError } from '../../load/setup/options.ts';
import { LatencyHistogram } from '../../load/engine/histogram.ts';
import { poissonCount } from '../../load/engine/arrivals.ts';

const hist = (values: number[]) => {
  const h = new LatencyHistogram();
  for (const v of values) h.record(v);
  return h.encode();
};

describe('gates', () => {
  it('judges only the SLOs given to stream, names limit and value, and fails on no sample', () => {
    const { options } = parseArgs(['stream', '--slo-ttft-p95-ms', '1', '--slo-error-share', '0.05'], {});
    const g = evaluateGates('stream', options, { ttft_p95_ms: 180, error_share: 0, e2e_p95_ms: 900 }, {}, []);
    expect(g.checks.map((c) => [c.metric, c.met])).toEqual([['ttft_p95_ms', false], ['error_share', true]]);
    expect(g.failed).toBe(1);
    expect(gateLine(g.checks[0]!)).toBe('SLO --slo-ttft-p95-ms: ttft_p95_ms <= 1 ms, seen 180 ms: BROKEN');
    // The default TTFT SLO (goodput only) gates nothing.
    expect(evaluateGates('stream', parseArgs(['stream'], {}).options, { ttft_p95_ms: 5000 }, {}, []).checks).toEqual([]);
    const none = evaluateGates('stream', options, { ttft_p95_ms: null, error_share: 0 }, {}, []);
    expect(none.checks[0]).toMatchObject({ value: null, met: false });
    // A rehearsal judges its SLOs per slice (its damage verdict), not on the pooled p95 of a planned outage.
    expect(evaluateGates('stream', options, { ttft_p95_ms: 180, error_share: 0 }, { rehearsal: { damage: {} } }, []).checks).toEqual([]);
  });

  it('throughput judges --slo-e2e-p95-ms on request latency; a sweep fails with no rate met or below --expect-capacity', () => {
    const t = evaluateGates('throughput', parseArgs(['throughput', '--rate', '5', '--slo-e2e-p95-ms', '100'], {}).options, { latency_p95_ms: 120 }, {}, []);
    expect(t.checks[0]).toMatchObject({ metric: 'latency_p95_ms', met: false });
    const sweep = parseArgs(['sweep', '--expect-capacity', '40'], {}).options;
    expect(evaluateGates('sweep', sweep, {}, { max_meeting_slo: null, unit: 'req/s' }, []).failed).toBe(2);
    expect(evaluateGates('sweep', sweep, {}, { max_meeting_slo: 35, unit: 'req/s' }, []).checks.map((c) => c.met)).toEqual([true, false]);
    expect(evaluateGates('sweep', sweep, {}, { max_meeting_slo: 40, unit: 'req/s' }, []).failed).toBe(0);
  });

  it('reads absolute limits beside relative thresholds; a bad one is a usage error', () => {
    const list = ['ttft_p95_ms<500', 'output_tokens_per_s>=100', 'error_share<0.01', 'ttft_p95_ms=10%'];
    expect(parseLimits(list)).toEqual([
      { metric: 'ttft_p95_ms', op: '<', value: 500 },
      { metric: 'output_tokens_per_s', op: '>=', value: 100 },
      { metric: 'error_share', op: '<', value: 0.01 },
    ]);
    expect([...parseThresholds(list).keys()]).toEqual(['ttft_p95_ms']);
    expect(() => parseLimits(['nope_ms<5'])).toThrow(UsageError);
    const g = evaluateGates('stream', parseArgs(['stream'], {}).options, { ttft_p95_ms: 600, output_tokens_per_s: 120 }, {}, parseLimits(list));
    expect(g.checks.map((c) => c.met)).toEqual([false, true, false]);
  });
});

describe('baseline noise and like for like', () => {
  const evidence = (values: number[]) => ({ scenario: 'stream', hdr_us: { ttft: hist(values) }, counts: { sent: values.length, ok: values.length } });
  const spread = (shift: number) => Array.from({ length: 100 }, (_, i) => 150 + shift + (i % 50));

  it('a change inside both runs\' intervals is same; a 400 ms step is a regression', () => {
    const base = { path: 'b.json', scenario: 'stream', startedAt: null, metrics: { ttft_p95_ms: 197, ok_rps: 10 }, evidence: evidence(spread(0)) };
    const same = compareMetrics({ ttft_p95_ms: 196.8, ok_rps: 9.99 }, base, new Map(), undefined, evidence(spread(-0.2)));
    expect(same.rows.map((r) => [r.metric, r.verdict])).toEqual([['ok_rps', 'same'], ['ttft_p95_ms', 'same']]);
    expect(same.outside_noise).toBe(0);
    const worse = compareMetrics({ ttft_p95_ms: 597, ok_rps: 10 }, base, new Map(), undefined, evidence(spread(400)));
    expect(worse.rows.find((r) => r.metric === 'ttft_p95_ms')).toMatchObject({ verdict: 'regression', outside_noise: true });
    // Where the samples stop, nothing bounds a percentile from above: 10 answers cannot show a p95 got worse.
    const few = { ...base, evidence: evidence(spread(0).slice(0, 10)) };
    const row = compareMetrics({ ttft_p95_ms: 597 }, few, new Map(), undefined, evidence(spread(400).slice(0, 10))).rows.find((r) => r.metric === 'ttft_p95_ms')!;
    expect(row.baseline_interval?.[1]).toBeNull();
    expect(row.verdict).toBe('same');
  });

  it('ignores the embedded reference\'s port, not a prompt length', () => {
    const t = (port: number) => ({ url: `http://127.0.0.1:${port}/v1`, kind: 'embedded-reference' });
    expect(settingsDiffer({ target: t(1234), options: { rate: 5 } }, { target: t(5678), options: { rate: 5 } })).toEqual([]);
    expect(settingsDiffer({ target: t(1), workload: { prompt_tokens: 100 } }, { target: t(2), workload: { prompt_tokens: 200 } }).map((d) => d.setting)).toEqual(['workload.prompt_tokens']);
    const remote = (host: string) => ({ url: `https://${host}/v1`, kind: 'remote' });
    expect(settingsDiffer({ target: remote('a') }, { target: remote('b') }).map((d) => d.setting)).toEqual(['target.url']);
  });
});

describe('sweep arrivals', () => {
  it('a Poisson step sends exactly the count its rate names, at random times inside the window, seeded', () => {
    const a = [...poissonCount(7.25, 4000, 3)];
    expect(a).toHaveLength(29);
    expect(a.every((t, i) => t >= 0 && t < 4000 && (i === 0 || t >= a[i - 1]!))).toBe(true);
    expect([...poissonCount(7.25, 4000, 3)]).toEqual(a);
    expect([...poissonCount(7.25, 4000, 4)]).not.toEqual(a);
  });
});
