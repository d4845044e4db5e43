// The run's result on the console: what was sent, what came back, the latency
// percentiles, output tokens, the driver's own load, and the findings.
import type { LoadSummary } from './summary.ts';
import { gateLine } from './gates.ts';
import { sweepView } from './sweep-view.ts';

export function renderConsoleSummary(s: LoadSummary): string {
  const lines: string[] = [];
  lines.push(`chatgate load: ${s.scenario} against ${s.target.url} (${s.target.kind}), ${s.duration_s} s, ${s.partial ? 'PARTIAL (interrupted)' : s.stop_reason}`);
  const c = s.counts;
  const statuses = Object.entries(s.status_codes).map(([k, v]) => `${k}x${v}`).join(' ') || 'none';
  lines.push(`  requests: ${c.sent} sent${c.not_sent ? `, ${c.not_sent} not sent (cap)` : ''}, ${c.ok} ok, ${c.failed} failed${c.aborted_at_stop ? `, ${c.aborted_at_stop} aborted at stop` : ''}${c.cancelled ? `, ${c.cancelled} cancelled on purpose (--cancel-share)` : ''}; statuses ${statuses}`);
  const failures = Object.entries(s.failures).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`);
  if (failures.length) lines.push(`  failures: ${failures.join(', ')}`);
  lines.push(`  rate: ${s.metrics.responses_rps ?? 0} responses/s, ${s.metrics.ok_rps ?? 0} ok/s`);
  for (const [name, l] of Object.entries(s.latencies)) {
    if (l.count === 0) continue;
    lines.push(`  ${name.replace(/_ms$/, '').padEnd(16)} ms  p50 ${f(l.p50_ms)}  p90 ${f(l.p90_ms)}  p95 ${f(l.p95_ms)}  p99 ${f(l.p99_ms)}  max ${f(l.max_ms)}  (n=${l.count})`);
  }
  const unc = (s.details as { latency_uncorrected_ms?: { count: number; p50_ms: number; p99_ms: number; max_ms: number } }).latency_uncorrected_ms;
  const mode = (s.details as { mode?: { co_correction?: boolean; engine?: string } }).mode;
  if (unc && unc.count && (mode?.co_correction || mode?.engine === 'open-loop')) {
    lines.push(`  ${'from send'.padEnd(16)} ms  p50 ${f(unc.p50_ms)}  p99 ${f(unc.p99_ms)}  max ${f(unc.max_ms)}  (uncorrected: what a sender blind to coordinated omission reports)`);
  }
  const out = s.output as { tokens_source?: string; output_tokens_total?: number; output_tokens_per_s?: number | null; output_chars_per_s?: number; note?: string } | null;
  if (out && out.tokens_source !== 'none') {
    lines.push(out.tokens_source === 'usage'
      ? `  output: ${out.output_tokens_total} tokens (from usage), ${out.output_tokens_per_s} tokens/s`
      : `  output: no usage from the target; ${out.output_chars_per_s} characters/s (characters, not tokens)`);
    if (out.note && out.tokens_source === 'usage') lines.push(`  note: ${out.note}`);
  }
  if (s.workload) lines.push(`  workload: ${Object.entries(s.workload).map(([k, v]) => `${k} ${String(v)}`).join(', ')}`);
  const tk = s.tokens as { input_tokens_total: number; output_tokens_total: number; input_tokens_per_s: number; output_tokens_per_s: number; total_tokens_per_s: number; prompt_tokens_source: Record<string, number>; completion_tokens_source: Record<string, number>; note?: string } | null | undefined;
  if (tk) {
    const src = (m: Record<string, number>) => Object.entries(m).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ');
    lines.push(`  tokens: input ${tk.input_tokens_total} (${src(tk.prompt_tokens_source)}), output ${tk.output_tokens_total} (${src(tk.completion_tokens_source)}); ${tk.input_tokens_per_s} in/s, ${tk.output_tokens_per_s} out/s, ${tk.total_tokens_per_s} total/s`);
    if (tk.note) lines.push(`  note: ${tk.note}`);
  }
  const gp = (s.details as { goodput?: { requests: number } }).goodput;
  if (gp && s.metrics.goodput_rps != null) lines.push(`  goodput (within the --slo-* bounds): ${gp.requests} requests, ${s.metrics.goodput_rps} req/s, ${s.metrics.goodput_output_tokens_per_s} output tokens/s`);
  if (s.scenario === 'sweep') {
    const v = sweepView(s);
    if (v) {
      for (const st of v.steps) lines.push(`  step ${st.text}`);
      lines.push(`  answer: ${v.answer}`);
      lines.push(`  latency: ${v.latencyScope}`);
      if (v.note) lines.push(`  note: ${v.note}`);
    }
  }
  if (s.scenario === 'rate-limit') {
    const d = s.details as { throttled_key?: string; first_429_offered_rps?: number | null; max_ok_per_s?: number; recovery?: { recovered?: boolean; recovery_ms?: number | null; first_advised_wait_ms?: number | null }; honoured_retries?: Array<{ ok: boolean }>; retry_headers?: { responses_429: number; with_no_hint: number } };
    lines.push(`  ${d.throttled_key}: first 429 at ${d.first_429_offered_rps ?? 'none'} req/s offered; at most ${d.max_ok_per_s} ok in one second`);
    if (d.retry_headers) lines.push(`  429s: ${d.retry_headers.responses_429}, ${d.retry_headers.with_no_hint} without a retry hint`);
    if (d.recovery && 'recovered' in d.recovery) lines.push(`  recovery: ${d.recovery.recovered ? `${d.recovery.recovery_ms} ms after the burst` : 'not served again'}${d.recovery.first_advised_wait_ms != null ? ` (advised ${d.recovery.first_advised_wait_ms} ms)` : ''}`);
    if (d.honoured_retries?.length) lines.push(`  retry after the advised wait: ${d.honoured_retries[0]!.ok ? 'succeeded' : 'FAILED'}`);
  }
  const dr = s.driver;
  if (!dr) lines.push(`  driver: not measured${s.driver_not_measured ? ` (${s.driver_not_measured})` : ''}`);
  else lines.push(`  driver: ${dr.cpu_cores} cores, event loop utilisation ${(dr.event_loop_utilization * 100).toFixed(0)} %, delay p99 ${dr.event_loop_delay_p99_ms} ms, schedule lag p99 ${dr.schedule_lag_p99_ms} ms${s.target.reference_cpu_s != null ? `; reference server ${s.target.reference_cpu_s} CPU s` : ''}`);
  if (dr?.warning) lines.push(`  WARNING: ${dr.warning}`);
  for (const g of s.gates?.checks ?? []) lines.push(`  ${gateLine(g)}`);
  if (s.findings.length === 0) lines.push('  findings: none');
  for (const fd of s.findings) {
    lines.push(`  ${fd.level.padEnd(6)} ${fd.clause.padEnd(8)} x${fd.count}  ${fd.message}`);
    // A finding that names requests (SVC-9's two) shows its example and how to send them again.
    if (fd.reproduce?.length) lines.push(`      ${fd.example ?? ''}`, ...fd.reproduce.map((c) => `      ${c}`));
  }
  return lines.join('\n');
}

function f(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}
