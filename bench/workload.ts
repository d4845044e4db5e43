// Bench section `workload`: what prompt size costs the stream driver, and whether its
// memory stays flat over a long run. Both run `npm run load -- stream` in its own process
// against bench/stream-responder.ts (first token at 200 ms, then one every 50 ms, 40
// tokens; it ignores the prompt, so only the driver's side changes):
// 1. The default short prompt and synthetic 4,096-token prompts (o200k_base) take turns,
//    the same concurrent streams for the same time: the driver's CPU per SSE event
//    (user + system / events read) and its peak RSS, side by side.
// 2. A steady open-loop run (1,024-token prompts, requests.jsonl written as it goes) for
//    --long-seconds (60 by default, 600 for the 10-minute check): the driver samples its
//    RSS every 5 s; printed are the samples, the growth from the first fifth to the last
//    fifth and the slope of the second half (MiB per minute).
import { statSync } from 'node:fs';
import { join } from 'node:path';

type Load = (argv: string[], baseUrl: string, out: string, timeoutMs?: number) => Promise<Record<string, any>>;
type Responder = { ready: { port: number }; close(): Promise<void> };

export interface WorkloadBenchInput {
  chatgateLoad: Load;
  streamResponder(): Promise<Responder>;
  work: string;
  seconds?: number;
  longSeconds: number;
  /** The long run's arrival rate (req/s). */
  longRate?: number;
  rounds?: number;
}

export async function benchWorkload(input: WorkloadBenchInput): Promise<Record<string, unknown>> {
  const secs = input.seconds ?? 6;
  const streams = 200;
  const rounds = input.rounds ?? 2;
  const responder = await input.streamResponder();
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  const figures: Record<string, unknown> = {};
  try {
    console.log(`\n6. Workload: the stream driver with short prompts vs 4,096-token prompts, ${streams} concurrent streams, ${secs} s per run, ${rounds} rounds taking turns`);
    const kinds: Record<string, string[]> = { short: [], 'prompt 4096': ['--prompt-tokens', '4096', '--output-tokens', '40'] };
    const per: Record<string, { us: number[]; rss: number[]; events: number }> = {};
    for (let round = 0; round < rounds; round++) {
      const line: string[] = [];
      for (const [name, extra] of Object.entries(kinds)) {
        const s = await input.chatgateLoad(['stream', '--concurrency', String(streams), '--duration', String(secs), '--warmup', '0', ...extra], base, join(input.work, `wl-${name.replace(/\W/g, '')}-${round}`));
        const events = s.details.sse_events as number;
        const us = ((s.driver.cpu_user_s + s.driver.cpu_system_s) * 1e6) / Math.max(1, events);
        const p = (per[name] ??= { us: [], rss: [], events: 0 });
        p.us.push(us);
        p.rss.push(s.driver.max_rss_mib);
        p.events += events;
        line.push(`${name}: ${us.toFixed(2)} µs/event, peak RSS ${s.driver.max_rss_mib} MiB, ${s.counts.ok} ok of ${s.counts.sent}`);
      }
      console.log(`   round ${round + 1}  ${line.join('  |  ')}`);
    }
    const med = (xs: number[]) => {
      const v = [...xs].sort((a, b) => a - b);
      return (v[(v.length - 1) >> 1]! + v[v.length >> 1]!) / 2;
    };
    const short = per.short!;
    const long = per['prompt 4096']!;
    console.log(`   result (medians of the rounds): driver CPU per event ${med(short.us).toFixed(2)} µs (short prompt) vs ${med(long.us).toFixed(2)} µs (4,096-token prompts; building them included), ` +
      `peak RSS ${Math.round(med(short.rss))} vs ${Math.round(med(long.rss))} MiB (the tokenizer's ranks are part of both: loaded for every lean-client run unless --tokenizer none)`);
    figures.workload_driver_us_per_event_short = round2(med(short.us));
    figures.workload_driver_us_per_event_4096 = round2(med(long.us));
    figures.workload_driver_rss_mib_short = Math.round(med(short.rss));
    figures.workload_driver_rss_mib_4096 = Math.round(med(long.rss));

    const rate = input.longRate ?? 50;
    const ls = input.longSeconds;
    console.log(`\n   long run: stream at ${rate} req/s (Poisson), 1,024-token prompts, ${ls} s, requests.jsonl written as it goes; driver RSS every 5 s`);
    const out = join(input.work, 'wl-long');
    const s = await input.chatgateLoad(['stream', '--rate', String(rate), '--duration', String(ls), '--warmup', '0', '--prompt-tokens', '1024', '--output-tokens', '40', '--cap-duration', String(ls + 60)], base, out, (ls + 120) * 1000);
    const samples = s.driver.rss_mib_samples as number[];
    const every = s.driver.rss_sample_every_s as number;
    const { early, late, slope } = rssTrend(samples, every);
    const jsonl = statSync(join(out, 'requests.jsonl')).size;
    console.log(`   RSS samples (MiB, every ${every} s): ${samples.join(' ')}`);
    console.log(`   result: ${s.counts.sent} requests, ${s.counts.ok} ok; RSS ${early.toFixed(0)} MiB in the first fifth, ${late.toFixed(0)} MiB in the last fifth; second half slope ${slope.toFixed(2)} MiB/min; requests.jsonl ${(jsonl / 1048576).toFixed(1)} MiB on disk; schedule lag p99 ${s.driver.schedule_lag_p99_ms} ms`);
    figures.workload_long_run_s = ls;
    figures.workload_long_run_requests = s.counts.sent;
    figures.workload_long_rss_mib_first_fifth = Math.round(early);
    figures.workload_long_rss_mib_last_fifth = Math.round(late);
    figures.workload_long_rss_slope_mib_per_min = round2(slope);
  } finally {
    await responder.close();
  }
  return figures;
}

/** RSS samples taken every `everyS` seconds: the mean of the first and last fifth, and the second half's slope (MiB/min). */
export function rssTrend(samples: number[], everyS: number): { early: number; late: number; slope: number } {
  const fifth = Math.max(1, Math.floor(samples.length / 5));
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return { early: avg(samples.slice(0, fifth)), late: avg(samples.slice(-fifth)), slope: slopePerMinute(samples.slice(Math.floor(samples.length / 2)), everyS) };
}

/** Least-squares slope of samples taken every `everyS` seconds, in units per minute. */
function slopePerMinute(ys: number[], everyS: number): number {
  if (ys.length < 2) return 0;
  const xs = ys.map((_, i) => (i * everyS) / 60);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < ys.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
