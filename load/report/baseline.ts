// --baseline: compares this run's metrics with an earlier summary.json, metric by
// metric, each with its threshold (metric-names.ts defaults, --threshold overrides).
// A change within the noise of the two runs is `same`: each side's figure has an
// interval (a percentile's from its HDR histogram, a rate's and a share's from its
// count), and overlapping intervals say nothing changed. Outside the noise, a change for
// the worse beyond the threshold is a regression (exit 1); better or within the
// threshold is fine. Metrics missing on either side are listed, not judged.
import { readFileSync } from 'node:fs';
import { LatencyHistogram, type PercentilePlot } from '../engine/histogram.ts';
import { METRICS, isMetricName, type MetricName } from './metric-names.ts';
import { OPTION_SPECS, UsageError, type Scenario } from '../setup/options.ts';

export interface Threshold { relative: number; absolute: number }

export interface BaselineRow {
  metric: string;
  unit: string;
  better: 'higher' | 'lower';
  baseline: number | null;
  current: number | null;
  /** Relative change, current vs baseline (null when the baseline is 0 or a side is missing). */
  change: number | null;
  /** How much worse is allowed, in the metric's unit. */
  allowed: number | null;
  /** 95 % intervals of each side's figure (null: no noise model, or no evidence; an upper end null: the samples do not bound it). */
  baseline_interval?: Interval | null;
  current_interval?: Interval | null;
  /** true: the intervals do not overlap; null: not known. */
  outside_noise?: boolean | null;
  /** same: within the noise; ok: worse, within the threshold; better; regression. */
  verdict: 'same' | 'ok' | 'better' | 'regression' | 'not compared';
}

/** [low, high]; high null when the samples stop below it (a p99 of 50 answers can be anything above their max). */
export type Interval = [number, number | null];

/** What a side's noise is computed from: its histograms and counts (summary.json has both). */
export interface NoiseEvidence {
  scenario: string;
  hdr_us?: Record<string, string>;
  counts?: { sent: number; ok: number };
}

export interface BaselineComparison {
  baseline_file: string;
  baseline_started_at: string | null;
  rows: BaselineRow[];
  regressions: number;
  /** Compared metrics whose change is outside the noise of the two runs (those with a noise model). */
  outside_noise: number;
  /** The baseline's percentile curves, for the report to draw beside this run's. */
  baseline_percentiles?: Record<string, PercentilePlot>;
  /** Settings (options, workload, target, reference model) that differ between the two runs: then the comparison is not like for like. */
  settings_differ: Array<{ setting: string; baseline: unknown; current: unknown }>;
  like_for_like: boolean;
}

/** What decides a run's figures besides the target's speed: compared setting by setting. */
export interface RunSettings {
  options?: Record<string, unknown>;
  workload?: Record<string, unknown>;
  target?: Record<string, unknown>;
}

export interface BaselineFile {
  path: string;
  scenario: string;
  startedAt: string | null;
  metrics: Record<string, number | null>;
  settings?: RunSettings;
  evidence?: NoiseEvidence;
  percentiles?: Record<string, PercentilePlot>;
}

// Where the reports go and how they are compared: not part of what was measured.
const NOT_SETTINGS = new Set(['options.out', 'options.baseline', 'options.thresholds', 'options.require_like_for_like', 'options.expect_capacity', 'options.quiet', 'options.dry_run', 'options.allow_remote', 'target.reference_cpu_s']);

const OPTION_DEFAULTS = new Map(OPTION_SPECS.map((s) => [s.key.replace(/[A-Z]/g, (ch) => `_${ch.toLowerCase()}`), s.default]));

/** Every setting that differs, as dotted paths (options.rate, workload.prompt_tokens, target.url, target.reference.latency.ttftMs, ...). */
export function settingsDiffer(baseline: RunSettings, current: RunSettings): Array<{ setting: string; baseline: unknown; current: unknown }> {
  const out: Array<{ setting: string; baseline: unknown; current: unknown }> = [];
  const walk = (path: string, b: unknown, c: unknown): void => {
    if (NOT_SETTINGS.has(path)) return;
    const bo = b !== null && typeof b === 'object' && !Array.isArray(b);
    const co = c !== null && typeof c === 'object' && !Array.isArray(c);
    if (bo && co) {
      const keys = new Set([...Object.keys(b as object), ...Object.keys(c as object)]);
      for (const k of [...keys].sort()) walk(`${path}.${k}`, (b as Record<string, unknown>)[k], (c as Record<string, unknown>)[k]);
      return;
    }
    // An option newer than the baseline's summary, left at its default, is the same setting.
    if (b === undefined && path.startsWith('options.') && JSON.stringify(c) === JSON.stringify(OPTION_DEFAULTS.get(path.slice(8)))) return;
    if (JSON.stringify(b) !== JSON.stringify(c)) out.push({ setting: path, baseline: b ?? null, current: c ?? null });
  };
  for (const part of ['target', 'options', 'workload'] as const) walk(part, baseline[part], current[part]);
  // The embedded reference listens on a random port each run: its address is not a setting.
  const embedded = baseline.target?.kind === 'embedded-reference' && current.target?.kind === 'embedded-reference';
  return embedded ? out.filter((d) => d.setting !== 'target.url') : out;
}

/** Reads and checks a baseline before the run starts (a wrong file is exit 2, not a surprise at the end). */
export function loadBaseline(path: string, scenario: Scenario): BaselineFile {
  let doc: { format?: unknown; scenario?: unknown; metrics?: unknown; started_at?: unknown; partial?: unknown };
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`--baseline ${path}: cannot read it as JSON (${(e as Error).message.split('\n')[0]})`);
  }
  if (doc?.format !== 'chatgate-load-summary' || typeof doc.metrics !== 'object' || doc.metrics === null) {
    throw new UsageError(`--baseline ${path}: not a chatgate load summary.json (no format "chatgate-load-summary" with metrics)`);
  }
  if (doc.scenario !== scenario) {
    throw new UsageError(`--baseline ${path} is from the ${String(doc.scenario)} scenario; compare ${scenario} runs with a ${scenario} baseline`);
  }
  const d = doc as Record<string, unknown>;
  const obj = (v: unknown) => (v !== null && typeof v === 'object' ? v as Record<string, unknown> : undefined);
  const plots = obj(obj(d.plots)?.percentiles) as Record<string, PercentilePlot> | undefined;
  return {
    path, scenario, startedAt: typeof doc.started_at === 'string' ? doc.started_at : null, metrics: doc.metrics as Record<string, number | null>,
    settings: { options: obj(d.options), workload: obj(d.workload), target: obj(d.target) },
    evidence: { scenario, hdr_us: obj(d.hdr_us) as Record<string, string> | undefined, counts: obj(d.counts) as NoiseEvidence['counts'] },
    ...(plots ? { percentiles: plots } : {}),
  };
}

/** "ttft_p95_ms=10%" (relative) or "ttft_p95_ms=25" (absolute, in the metric's unit). */
export function parseThresholds(list: string[]): Map<MetricName, Threshold> {
  const out = new Map<MetricName, Threshold>();
  for (const item of list) {
    // metric<limit is an absolute limit on this run alone (gates.ts), not a comparison.
    if (/[<>]/.test(item)) continue;
    const m = /^([a-z0-9_]+)=(\d*\.?\d+)(%?)$/.exec(item.trim());
    if (!m) throw new UsageError(`--threshold "${item}": use metric=10% (relative) or metric=25 (absolute) against the baseline, or metric<500 as a limit, e.g. ttft_p95_ms=15%`);
    const [, name, value, pct] = m;
    if (!isMetricName(name!)) throw new UsageError(`--threshold "${item}": unknown metric ${name}; known: ${Object.keys(METRICS).join(', ')}`);
    out.set(name, pct ? { relative: Number(value) / 100, absolute: 0 } : { relative: 0, absolute: Number(value) });
  }
  return out;
}

export function compareMetrics(
  current: Record<string, number | null | undefined>,
  baseline: BaselineFile,
  overrides: Map<MetricName, Threshold>,
  currentSettings?: RunSettings,
  currentEvidence?: NoiseEvidence,
): BaselineComparison {
  const noiseB = noiseOf(baseline.evidence);
  const noiseC = noiseOf(currentEvidence);
  const rows: BaselineRow[] = [];
  const names = new Set([...Object.keys(baseline.metrics), ...Object.keys(current)]);
  for (const name of names) {
    if (!isMetricName(name)) continue;
    const info = METRICS[name];
    const b = num(baseline.metrics[name]);
    const c = num(current[name]);
    const row: BaselineRow = { metric: name, unit: info.unit, better: info.better, baseline: b, current: c, change: null, allowed: null, verdict: 'not compared' };
    if (b !== null && c !== null) {
      const t = overrides.get(name) ?? info.tolerance;
      const worse = info.better === 'lower' ? c - b : b - c;
      const allowed = Math.max(t.relative * Math.abs(b), t.absolute);
      row.change = b === 0 ? null : round4((c - b) / Math.abs(b));
      row.allowed = round4(allowed);
      const ib = noiseB(name, b);
      const ic = noiseC(name, c);
      row.baseline_interval = ib;
      row.current_interval = ic;
      const above = (x: Interval, y: Interval) => x[1] !== null && x[1] < y[0];
      row.outside_noise = ib && ic ? above(ib, ic) || above(ic, ib) : null;
      row.verdict = b === c || row.outside_noise === false ? 'same' : worse > allowed + 1e-12 ? 'regression' : worse < 0 ? 'better' : 'ok';
    }
    rows.push(row);
  }
  const order = Object.keys(METRICS);
  rows.sort((x, y) => order.indexOf(x.metric) - order.indexOf(y.metric));
  return {
    baseline_file: baseline.path,
    baseline_started_at: baseline.startedAt,
    rows,
    regressions: rows.filter((r) => r.verdict === 'regression').length,
    outside_noise: rows.filter((r) => r.outside_noise === true).length,
    ...(baseline.percentiles ? { baseline_percentiles: baseline.percentiles } : {}),
    ...likeForLike(baseline.settings, currentSettings),
  };
}

/** z of a two-sided 95 % interval. */
const Z95 = 1.96;
const TIMER_MS = 1;

/**
 * A side's 95 % interval for a metric, or null without a model. Percentiles: the
 * order-statistic interval (ranks n*q -/+ z*sqrt(n*q*(1-q)), read off the HDR histogram);
 * rates: the count's Poisson noise; shares: the binomial's. A sweep's latency metrics
 * are its best step's, not the pooled histogram's, so they get no interval.
 */
function noiseOf(e: NoiseEvidence | undefined): (metric: MetricName, value: number) => Interval | null {
  const hists = new Map<string, LatencyHistogram>();
  const hist = (key: string): LatencyHistogram | undefined => {
    const raw = e?.hdr_us?.[key];
    if (raw === undefined) return undefined;
    if (!hists.has(key)) {
      try { hists.set(key, LatencyHistogram.decode(raw)); } catch { return undefined; }
    }
    return hists.get(key);
  };
  return (metric, value) => {
    if (!e) return null;
    const unit = METRICS[metric].unit;
    const p = /^([a-z0-9_]+?)_p(\d+)_ms$/.exec(metric);
    if (p && e.scenario !== 'sweep') {
      const h = hist(p[1]!);
      if (!h || h.count === 0) return null;
      // Gaps of one stream move together: ITL's independent samples are the streams, not the gaps.
      const n = Math.min(h.count, p[1] === 'itl' && e.counts?.ok ? e.counts.ok : h.count);
      const q = Number(p[2]) / 100;
      const half = Z95 * Math.sqrt(n * q * (1 - q));
      const lo = Math.max(0, Math.floor(n * q - half)) / n;
      // A rank past the last sample: the percentile stops where the samples stop, so nothing bounds it from above.
      const hi = n * q + half >= n ? null : Math.ceil(n * q + half) / n;
      const low = h.percentileMs(100 * lo);
      const high = hi === null ? null : h.percentileMs(100 * hi);
      // A figure its own histogram does not hold (an edited or foreign summary): no interval, the threshold alone judges.
      if (value < low - TIMER_MS || (high !== null && value > high + TIMER_MS)) return null;
      // Never narrower than the driver's timer resolution (1 ms).
      return [Math.min(value - TIMER_MS, low), high === null ? null : Math.max(value + TIMER_MS, high)];
    }
    const ok = e.counts?.ok ?? 0;
    const sent = e.counts?.sent ?? 0;
    if ((unit === 'req/s' || unit === 'tokens/s') && e.scenario !== 'sweep' && ok > 0) {
      const h = Z95 / Math.sqrt(ok);
      return [round4(value * (1 - h)), round4(value * (1 + h))];
    }
    if (unit === 'share 0-1' && sent > 0) {
      const h = Z95 * Math.sqrt(Math.max(value * (1 - value), 1 / sent) / sent);
      return [round4(Math.max(0, value - h)), round4(Math.min(1, value + h))];
    }
    return null;
  };
}

function likeForLike(b: RunSettings | undefined, c: RunSettings | undefined): Pick<BaselineComparison, 'settings_differ' | 'like_for_like'> {
  const differ = b && c ? settingsDiffer(b, c) : [];
  return { settings_differ: differ, like_for_like: differ.length === 0 };
}

export function formatComparison(cmp: BaselineComparison): string {
  const head = ['metric', 'baseline', 'current', 'change', 'allowed worse', 'noise (95 %)', 'verdict'];
  const iv = (i: Interval | null | undefined) => (i ? `${fmt(i[0])}-${i[1] === null ? '?' : fmt(i[1])}` : '-');
  const body = cmp.rows.map((r) => [
    r.metric,
    fmt(r.baseline),
    fmt(r.current),
    r.change === null ? '-' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`,
    r.allowed === null ? '-' : `${r.better === 'lower' ? '+' : '-'}${fmt(r.allowed)} ${r.unit}`,
    r.outside_noise == null ? '-' : `${iv(r.baseline_interval)} / ${iv(r.current_interval)}`,
    r.verdict === 'regression' ? 'REGRESSION' : r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const differ = cmp.settings_differ ?? [];
  return [
    `Baseline ${cmp.baseline_file}${cmp.baseline_started_at ? ` (${cmp.baseline_started_at})` : ''}: ${cmp.regressions} regression${cmp.regressions === 1 ? '' : 's'}; ${cmp.outside_noise ?? 0} metric${cmp.outside_noise === 1 ? '' : 's'} outside the noise of the two runs; ${cmp.like_for_like ? 'like for like' : 'NOT like for like'}`,
    ...(differ.length ? [
      `NOT LIKE FOR LIKE: ${differ.length} setting${differ.length === 1 ? '' : 's'} differ between the two runs, so a change below may come from them and not from the target:`,
      ...differ.map((d) => `  ${d.setting}: ${JSON.stringify(d.baseline)} -> ${JSON.stringify(d.current)}`),
    ] : []),
    line(head),
    ...body.map(line),
  ].join('\n');
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function fmt(n: number | null): string {
  if (n === null) return '-';
  if (Math.abs(n) >= 100) return n.toFixed(1);
  if (Math.abs(n) >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}

function round4(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
