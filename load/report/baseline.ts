// --baseline: compares this run's metrics with an earlier summary.json, metric by
// metric, each with its threshold (metric-names.ts defaults, --threshold overrides).
// A change for the worse beyond the threshold is a regression (exit 1); better or
// within the threshold is fine. Metrics missing on either side are listed, not judged.
import { readFileSync } from 'node:fs';
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
  verdict: 'ok' | 'better' | 'regression' | 'not compared';
}

export interface BaselineComparison {
  baseline_file: string;
  baseline_started_at: string | null;
  rows: BaselineRow[];
  regressions: number;
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
}

// Where the reports go and how they are compared: not part of what was measured.
const NOT_SETTINGS = new Set(['options.out', 'options.baseline', 'options.thresholds', 'options.quiet', 'options.dry_run', 'options.allow_remote', 'target.reference_cpu_s']);

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
  return out;
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
  return {
    path, scenario, startedAt: typeof doc.started_at === 'string' ? doc.started_at : null, metrics: doc.metrics as Record<string, number | null>,
    settings: { options: obj(d.options), workload: obj(d.workload), target: obj(d.target) },
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
): BaselineComparison {
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
      row.verdict = worse > allowed + 1e-12 ? 'regression' : worse < 0 ? 'better' : 'ok';
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
    ...likeForLike(baseline.settings, currentSettings),
  };
}

function likeForLike(b: RunSettings | undefined, c: RunSettings | undefined): Pick<BaselineComparison, 'settings_differ' | 'like_for_like'> {
  const differ = b && c ? settingsDiffer(b, c) : [];
  return { settings_differ: differ, like_for_like: differ.length === 0 };
}

export function formatComparison(cmp: BaselineComparison): string {
  const head = ['metric', 'baseline', 'current', 'change', 'allowed worse', 'verdict'];
  const body = cmp.rows.map((r) => [
    r.metric,
    fmt(r.baseline),
    fmt(r.current),
    r.change === null ? '-' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)} %`,
    r.allowed === null ? '-' : `${r.better === 'lower' ? '+' : '-'}${fmt(r.allowed)} ${r.unit}`,
    r.verdict === 'regression' ? 'REGRESSION' : r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  const differ = cmp.settings_differ ?? [];
  return [
    `Baseline ${cmp.baseline_file}${cmp.baseline_started_at ? ` (${cmp.baseline_started_at})` : ''}: ${cmp.regressions} regression${cmp.regressions === 1 ? '' : 's'}`,
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
