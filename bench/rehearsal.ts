// Bench section `rehearsal`: whether a rehearsal's memory stays flat over a long hold.
// `npm run load -- stream --phases "hold <N>s at <rate>" --slice 5s` with a change (a no-op
// command) in the middle, against bench/stream-responder.ts, for --long-seconds (60 by
// default; 3600 for the hour): the driver samples its RSS (at most 240 samples, spread
// over the run); printed are the samples, the first and last fifth and the slope of the
// second half (MiB per minute), beside the slices the run kept.
import { rssTrend } from './workload.ts';

type Load = (argv: string[], baseUrl: string, out: string, timeoutMs?: number) => Promise<Record<string, any>>;
type Responder = { ready: { port: number }; close(): Promise<void> };

export async function benchRehearsal(input: { chatgateLoad: Load; streamResponder(): Promise<Responder>; work: string; longSeconds: number; longRate?: number }): Promise<Record<string, unknown>> {
  const responder = await input.streamResponder();
  const base = `http://127.0.0.1:${responder.ready.port}/v1`;
  const rate = input.longRate ?? 50;
  const ls = input.longSeconds;
  const figures: Record<string, unknown> = {};
  try {
    console.log(`\n7. Rehearsal: stream --phases "hold ${ls}s at ${rate}" --slice 5s, a change at ${ls / 2} s; driver RSS sampled through the run`);
    const s = await input.chatgateLoad(['stream', '--phases', `hold ${ls}s at ${rate}`, '--slice', '5s', '--at', `${ls / 2}s`, '--run', 'true', '--warmup', '0', '--cap-duration', String(ls + 60)], base, `${input.work}/rehearsal`, (ls + 120) * 1000);
    const samples = s.driver.rss_mib_samples as number[];
    const every = s.driver.rss_sample_every_s as number;
    const { early, late, slope } = rssTrend(samples, every);
    const slices = (s.plots?.extra?.slices ?? []) as unknown[];
    console.log(`   RSS samples (MiB, every ${every} s): ${samples.join(' ')}`);
    console.log(`   result: ${s.counts.sent} requests, ${s.counts.ok} ok, ${slices.length} slices; RSS ${early.toFixed(0)} MiB in the first fifth, ${late.toFixed(0)} MiB in the last fifth; second half slope ${slope.toFixed(2)} MiB/min; ${s.details?.rehearsal?.damage?.verdict ?? 'no verdict'}`);
    figures.rehearsal_run_s = ls;
    figures.rehearsal_rate = rate;
    figures.rehearsal_requests = s.counts.sent;
    figures.rehearsal_slices = slices.length;
    figures.rehearsal_rss_mib_first_fifth = Math.round(early);
    figures.rehearsal_rss_mib_last_fifth = Math.round(late);
    figures.rehearsal_rss_slope_mib_per_min = Math.round(slope * 100) / 100;
  } finally {
    await responder.close();
  }
  return figures;
}
