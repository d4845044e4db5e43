// report.html: one self-contained file (open it offline, attach it to a ticket) with
// the run's figures as tables and its distributions and time series as uPlot charts.
// uPlot (small, fast, no dependencies) is inlined from node_modules; the data is the
// summary itself, embedded as JSON. Everything is redacted before it is written.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { redact, redactDeep } from '../../lib/run/redact.ts';
import type { LoadSummary } from './summary.ts';
import { METRICS, isMetricName } from './metric-names.ts';
import { baselineOverlayHtml, sweepChartHtml, verdictHtml } from './verdict-html.ts';
// The page's timeline runs the registry's own status rule (its source, inlined).
import { isServerError } from '../../lib/spec/rules/status.ts';

const require = createRequire(import.meta.url);
const UPLOT_DIR = join(dirname(require.resolve('uplot/package.json')), 'dist');

export function writeHtmlReport(dir: string, summary: LoadSummary): string {
  const path = join(dir, 'report.html');
  writeFileSync(path, renderHtml(summary));
  return path;
}

export function renderHtml(input: LoadSummary): string {
  const s = redactDeep(input);
  const uplotJs = readFileSync(join(UPLOT_DIR, 'uPlot.iife.min.js'), 'utf8').replace(/<\/script/gi, '<\\/script');
  const uplotCss = readFileSync(join(UPLOT_DIR, 'uPlot.min.css'), 'utf8');
  const data = JSON.stringify({ scenario: s.scenario, plots: s.plots, timeline: s.timeline, details: s.details })
    .replace(/</g, '\\u003c');
  const title = `chatgate load: ${s.scenario} — ${s.started_at}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>${uplotCss}
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1000px;padding:0 16px;color:#1d232a}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0 12px;font-size:13px;display:block;overflow-x:auto;max-width:100%}td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f6f8}td:first-child,th:first-child{text-align:left}.muted{color:#667}.banner{padding:8px 12px;border-radius:4px;margin:10px 0}
.partial{background:#fff3cd;border:1px solid #e0c060}.fail{background:#fde2e1;border:1px solid #e09a96}.ok{background:#e3f4e5;border:1px solid #98c9a0}
.lvl-MUST,.lvl-COMPAT{color:#b3261e;font-weight:600}.lvl-SHOULD{color:#8a5a00}.chart{margin:8px 0 18px}code{background:#f4f6f8;padding:0 3px}
.help{font-size:13px;color:#445}</style></head><body>
<h1>${esc(title)}</h1>
<div class="muted">target ${esc(s.target.url)} (${esc(s.target.kind)}) · ${s.duration_s} s · stop reason: ${esc(s.stop_reason)}</div>
${s.partial ? '<div class="banner partial"><b>Partial run</b>: stopped before it finished (Ctrl-C); the figures cover what ran.</div>' : ''}
${verdictBanner(s)}
${verdictHtml(s)}
${s.driver.warning ? `<div class="banner partial"><b>Driver warning</b>: ${esc(s.driver.warning)}</div>` : ''}
<h2>Key metrics</h2>
${metricsTable(s)}
${s.baseline ? `<h2>Baseline comparison</h2>${baselineTable(s)}${baselineOverlayHtml(s)}` : ''}
<h2>Findings</h2>
${findingsTable(s)}
<h2>Requests</h2>
${countsTable(s)}
<h2>Latency distributions</h2>
<p class="help">Percentile plots: read the latency (y) a given share of requests stayed under (x, log scale towards the tail). TTFT is measured from each request's intended send time to its first content chunk, so a late sender or a stalled target cannot hide (no coordinated omission); ITL is the gap between consecutive content chunks; E2E runs to the end of the stream.</p>
${latencyTable(s)}
<div id="percentile-charts"></div>
<div id="bucket-charts"></div>
<h2>Over time</h2>
<div id="timeline-charts"></div>
${scenarioSection(s)}
<h2>The driver</h2>
${kvTable(s.driver as unknown as Record<string, unknown>)}
<p class="help">CPU in cores (1 = one core busy throughout). High event-loop utilisation or delay means the load generator, not the target, may have set the figures.</p>
<h2>Options</h2>
${kvTable(s.options)}
<script>${uplotJs}</script>
<script type="application/json" id="data">${data}</script>
<script>var isServerError = ${isServerError.toString()};
${CHART_CODE}</script>
</body></html>
`;
}

function verdictBanner(s: LoadSummary): string {
  const failing = s.findings.filter((f) => f.level === 'MUST' || f.level === 'COMPAT');
  const regress = s.baseline?.regressions ?? 0;
  // Broken gates and unlike settings have their own banners (verdict-html.ts): never a green one beside them.
  if ((s.gates?.failed ?? 0) > 0 || (s.baseline && !s.baseline.like_for_like)) return '';
  if (failing.length === 0 && regress === 0) return '<div class="banner ok">No MUST-level finding' + (s.baseline ? ', no regression against the baseline' : '') + '.</div>';
  const parts = [];
  if (failing.length) parts.push(`${failing.length} MUST-level finding${failing.length === 1 ? '' : 's'}`);
  if (regress) parts.push(`${regress} regression${regress === 1 ? '' : 's'} against the baseline`);
  return `<div class="banner fail"><b>${esc(parts.join(', '))}</b></div>`;
}

function metricsTable(s: LoadSummary): string {
  const rows = Object.entries(s.metrics).map(([k, v]) => {
    const info = isMetricName(k) ? METRICS[k] : undefined;
    return `<tr><td><code>${esc(k)}</code></td><td>${v === null || v === undefined ? '–' : fmt(v)}</td><td>${esc(info?.unit ?? '')}</td><td style="text-align:left">${esc(info?.description ?? '')}</td></tr>`;
  });
  return `<table><tr><th>metric</th><th>value</th><th>unit</th><th style="text-align:left">meaning</th></tr>${rows.join('')}</table>`;
}

function baselineTable(s: LoadSummary): string {
  const b = s.baseline!;
  const rows = b.rows.map((r) => `<tr><td><code>${esc(r.metric)}</code></td><td>${r.baseline ?? '–'}</td><td>${r.current ?? '–'}</td><td>${r.change === null ? '–' : `${(r.change * 100).toFixed(1)} %`}</td><td>${r.allowed ?? '–'}</td><td class="${r.verdict === 'regression' ? 'lvl-MUST' : ''}">${esc(r.verdict)}</td></tr>`);
  return `<p class="muted">against ${esc(b.baseline_file)} ${esc(b.baseline_started_at ?? '')}</p><table><tr><th>metric</th><th>baseline</th><th>current</th><th>change</th><th>allowed worse</th><th>verdict</th></tr>${rows.join('')}</table>`;
}

function findingsTable(s: LoadSummary): string {
  if (s.findings.length === 0) return '<p>None: every error answer had a proper body, no 5xx other than 503, no dropped connection, every checked body was valid.</p>';
  const rows = s.findings.map((f) => `<tr><td class="lvl-${f.level}">${esc(f.level)}</td><td>${esc(f.clause)}</td><td>${f.count}</td><td style="text-align:left">${esc(f.message)}${f.example ? `<br><span class="muted">${esc(f.example)}</span>` : ''}</td></tr>`);
  return `<table><tr><th>level</th><th>clause</th><th>count</th><th style="text-align:left">what</th></tr>${rows.join('')}</table>`;
}

function countsTable(s: LoadSummary): string {
  const failures = Object.entries(s.failures).filter(([, v]) => v > 0);
  return `${kvTable(s.counts as unknown as Record<string, unknown>)}
<table><tr><th>status</th><th>count</th></tr>${Object.entries(s.status_codes).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>
${failures.length ? `<table><tr><th>failure</th><th>count</th></tr>${failures.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${v}</td></tr>`).join('')}</table>` : ''}
${s.failure_examples.length ? `<table><tr><th>failure</th><th>status</th><th style="text-align:left">example</th></tr>${s.failure_examples.map((e) => `<tr><td>${esc(e.kind)}</td><td>${e.status ?? '–'}</td><td style="text-align:left">${esc(e.detail)}</td></tr>`).join('')}</table>` : ''}
${Object.keys(s.routes).length > 1 ? `<table><tr><th>route</th><th>sent</th><th>ok</th><th>p50 ms</th><th>p95 ms</th><th>statuses</th></tr>${Object.entries(s.routes).map(([k, v]) => { const r = v as { sent: number; ok: number; p50_ms: number; p95_ms: number; status_codes: Record<string, number> }; return `<tr><td>${esc(k)}</td><td>${r.sent}</td><td>${r.ok}</td><td>${r.p50_ms}</td><td>${r.p95_ms}</td><td>${esc(JSON.stringify(r.status_codes))}</td></tr>`; }).join('')}</table>` : ''}
${s.output ? `<h3>Output</h3>${kvTable(s.output)}` : ''}
${s.tokens ? `<h3>Tokens</h3>${kvTable(s.tokens)}` : ''}
${s.workload ? `<h3>Workload</h3>${kvTable(s.workload)}` : ''}
${s.requests_log ? `<p class="muted">per request: <code>${esc(s.requests_log.file)}</code> beside this report (${s.requests_log.lines} lines)</p>` : ''}
<p class="muted">body checks: ${s.body_checks.checked} checked against the schemas, ${s.body_checks.invalid} invalid · error answers: ${s.error_answers.checked} checked, ${s.error_answers.improper} without a proper error body</p>`;
}

function latencyTable(s: LoadSummary): string {
  const cols = ['count', 'min_ms', 'mean_ms', 'p50_ms', 'p90_ms', 'p95_ms', 'p99_ms', 'p999_ms', 'max_ms'] as const;
  const entries = Object.entries(s.latencies).filter(([, v]) => v.count > 0);
  const extra = (s.details as { latency_uncorrected_ms?: Record<string, number> }).latency_uncorrected_ms;
  if (extra && extra.count) entries.push(['latency_uncorrected_ms', extra as never]);
  return `<table><tr><th>ms</th>${cols.map((c) => `<th>${c.replace('_ms', '')}</th>`).join('')}</tr>${entries.map(([name, v]) => `<tr><td>${esc(name)}</td>${cols.map((c) => `<td>${fmt((v as unknown as Record<string, number>)[c]!)}</td>`).join('')}</tr>`).join('')}</table>`;
}

function scenarioSection(s: LoadSummary): string {
  const d = s.details as Record<string, unknown>;
  if (s.scenario === 'sweep') {
    const steps = (d.steps ?? []) as Array<Record<string, unknown>>;
    const cols = ['step', 'phase', 'offered', 'sent_rps', 'completed_rps', 'backlog_at_end', 'samples', 'goodput_rps', 'ttft_p50_ms', 'ttft_p95_ms', 'itl_p95_ms', 'tpot_p95_ms', 'e2e_p95_ms', 'error_share', 'share_429', 'share_503', 'schedule_lag_p99_ms', 'valid', 'slo_met'];
    const bound = d.broken_at == null ? '' : ` ${esc(String(d.broken_at))} ${esc(String(d.unit))} broke it (${esc(((d.bound_by_detail ?? []) as string[]).join(', '))}).`;
    return `<h2>Sweep</h2><p>Highest step meeting the SLO: <b>${esc(String(d.max_meeting_slo ?? 'none'))}</b> ${esc(String(d.unit))}, goodput there ${esc(String(d.goodput_at_max_rps ?? '–'))} req/s.${bound} ${d.note ? esc(String(d.note)) : ''}</p>
<p class="help">Goodput counts only the requests that met every per-request SLO (TTFT, and ITL/E2E when set). The curve bends where the target saturates: the completed rate stops following the offered rate, TTFT climbs, 429/503 appear.</p>
${sweepChartHtml(s)}${table(cols, steps)}<div id="sweep-charts"></div>`;
  }
  if (s.scenario === 'rate-limit') {
    const phases = (d.phases ?? []) as Array<Record<string, unknown>>;
    return `<h2>Rate limit</h2>
<p>Throttled key: <code>${esc(String(d.throttled_key))}</code>; first 429 at an offered <b>${esc(String(d.first_429_offered_rps ?? 'none'))}</b> req/s; most 2xx in one second: ${esc(String(d.max_ok_per_s))}.</p>
${table(['phase', 'offered_rps', 'sent', 'ok', 'status_429', 'status_503', 'status_5xx_other', 'transport_errors', 'ok_rps'], phases)}
<h3>Retry headers on 429</h3>${kvTable(d.retry_headers as Record<string, unknown>)}
<h3>Recovery and retries</h3>${kvTable(d.recovery as Record<string, unknown>)}
${table(['advised_wait_ms', 'source', 'status', 'ok'], (d.honoured_retries ?? []) as Array<Record<string, unknown>>)}
<h3>Second key</h3>${kvTable(d.isolation as Record<string, unknown>)}
<div id="bystander-charts"></div>`;
  }
  return `<h2>Run details</h2>${kvTable(d)}`;
}

function table(cols: string[], rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '<p class="muted">(none)</p>';
  return `<table><tr>${cols.map((c) => `<th>${esc(c)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${cols.map((c) => `<td>${cell(r[c])}</td>`).join('')}</tr>`).join('')}</table>`;
}

function kvTable(obj: Record<string, unknown> | null | undefined): string {
  if (!obj) return '';
  return `<table>${Object.entries(obj).filter(([, v]) => v !== undefined).map(([k, v]) => `<tr><td>${esc(k)}</td><td style="text-align:left">${cell(v)}</td></tr>`).join('')}</table>`;
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return '–';
  if (typeof v === 'number') return fmt(v);
  if (typeof v === 'object') return `<code>${esc(JSON.stringify(v))}</code>`;
  return esc(String(v));
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  return Math.abs(n) >= 100 ? n.toFixed(1) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3);
}

function esc(s: string): string {
  return redact(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

// The charts, drawn in the browser from the embedded data (uPlot needs a DOM).
const CHART_CODE = String.raw`
(function () {
  var D = JSON.parse(document.getElementById('data').textContent);
  var COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];
  var WIDTH = Math.min(960, document.body.clientWidth - 20);
  function div(parentId) { var p = document.getElementById(parentId); var d = document.createElement('div'); d.className = 'chart'; p && p.appendChild(d); return d; }
  function series(list) { return [{}].concat(list.map(function (s, i) {
    var c = s.color || COLORS[i % COLORS.length];
    var o = { label: s.label, stroke: c, width: 2, scale: s.scale || 'y', points: { show: !!s.points } };
    if (s.bars) { o.paths = uPlot.paths.bars({ size: [0.95, 60] }); o.fill = c + '66'; o.width = 1; }
    if (s.dash) o.dash = [6, 4];
    return o; })); }
  function plot(parentId, title, x, list, xLabel, yLabel, extra) {
    extra = extra || {};
    var opts = { title: title, width: WIDTH, height: 280, legend: { live: true },
      scales: { x: extra.xRange ? { time: false, range: function () { return extra.xRange; } } : { time: false }, y: extra.ylog ? { distr: 3 } : {} },
      axes: [ { label: xLabel, splits: extra.xSplits, values: extra.xValues }, { label: yLabel } ],
      series: series(list) };
    if (extra.y2) { opts.scales.y2 = {}; opts.axes.push({ side: 1, scale: 'y2', label: extra.y2, grid: { show: false } }); }
    new uPlot(opts, [x].concat(list.map(function (s) { return s.values; })), div(parentId));
  }
  // Percentile plots: x = -log10(1 - p), so 90 %, 99 %, 99.9 % are evenly spaced.
  function px(p) { return -Math.log10(1 - Math.min(p, 99.999) / 100); }
  function pLabel(v) { var p = 100 * (1 - Math.pow(10, -v)); return (p >= 99 ? p.toFixed(Math.max(0, Math.round(v) - 2)) : p.toFixed(0)) + '%'; }
  var pct = D.plots.percentiles || {};
  var names = Object.keys(pct);
  // Series that share a chart: each pair is read together.
  var PAIRS = [['ttft_ms', 'first_event_ms'], ['itl_ms', 'tpot_ms'], ['latency_ms', 'latency_uncorrected_ms']];
  var groups = [];
  PAIRS.forEach(function (p) { var g = p.filter(function (n) { return pct[n]; }); if (g.length) groups.push(g); });
  names.forEach(function (n) { if (!groups.some(function (g) { return g.indexOf(n) >= 0; })) groups.push([n]); });
  groups.forEach(function (g) {
    var x = pct[g[0]].percentile.map(px);
    plot('percentile-charts', g.join(' vs ') + ' by percentile', x,
      g.map(function (n, i) { return { label: n, values: pct[n].value_ms, dash: i > 0 }; }), 'percentile', 'ms',
      { xSplits: function () { return [0, 1, 2, 3, 4, 5]; }, xValues: function (u, v) { return v.map(pLabel); } });
  });
  var buckets = D.plots.buckets || {};
  // Bars at their bucket's centre on an x range from 0 to the last bucket's top edge, so the first and last bars show whole.
  ['ttft_ms', 'itl_ms', 'e2e_ms', 'tpot_ms', 'latency_ms'].filter(function (n) { return buckets[n]; }).forEach(function (n) {
    var e = buckets[n].bucket_ms, w = e.length > 1 ? e[1] - e[0] : Math.max(e[0], 0.001);
    plot('bucket-charts', n + ' histogram', e.map(function (v) { return v + w / 2; }), [{ label: 'requests', values: buckets[n].count, bars: true }], 'ms', 'count',
      { xRange: [0, e[e.length - 1] + w] });
  });
  // Timeline: answers per second by status class, and latency per second.
  var T = D.timeline || [];
  if (T.length) {
    var x = T.map(function (p) { return p.t_s; });
    function byStatus(test) { return T.map(function (p) { var n = 0; for (var k in p.status) if (test(+k)) n += p.status[k]; return n; }); }
    var lines = [
      { label: 'sent/s', values: T.map(function (p) { return p.sent; }), color: '#7f7f7f', dash: true },
      { label: 'ok/s', values: T.map(function (p) { return p.ok; }), color: '#2ca02c' },
      { label: '429/s', values: byStatus(function (s) { return s === 429; }), color: '#ff7f0e' },
      { label: '503/s', values: byStatus(function (s) { return s === 503; }), color: '#9467bd' },
      { label: 'other 5xx/s', values: byStatus(isServerError), color: '#d62728' },
      { label: 'other 4xx/s', values: byStatus(function (s) { return s >= 400 && s < 500 && s !== 429; }), color: '#8c564b' },
      { label: 'failures/s', values: T.map(function (p) { return p.failures; }), color: '#e377c2' }
    ];
    plot('timeline-charts', 'Throughput and status codes per second', x, lines, 's', 'per second');
    var metric = D.scenario === 'stream' || D.scenario === 'sweep' ? 'TTFT' : 'latency';
    // A second without answers has no latency: null, drawn as a gap (uPlot does not span gaps), never as 0 ms.
    plot('timeline-charts', metric + ' per second (answers completed in that second; gaps: none)', x, [
      { label: 'p50', values: T.map(function (p) { return p.p50_ms; }) },
      { label: 'p95', values: T.map(function (p) { return p.p95_ms; }) }], 's', 'ms');
  }
  var sweep = D.plots.extra && D.plots.extra.sweep;
  if (sweep && sweep.length) {
    var sx = sweep.map(function (r) { return r.offered; });
    plot('sweep-charts', 'Sweep: completed rate and goodput vs offered', sx, [
      { label: 'completed ok/s', values: sweep.map(function (r) { return r.completed_rps; }), points: true },
      { label: 'goodput/s', values: sweep.map(function (r) { return r.goodput_rps; }), points: true },
      { label: 'error share', values: sweep.map(function (r) { return r.error_share; }), scale: 'y2', dash: true, points: true }],
      'offered (' + D.details.unit + ')', 'per second', { y2: 'error share' });
    var slo = D.details.slo && D.details.slo.ttft_p95_ms;
    plot('sweep-charts', 'Sweep: TTFT vs offered (SLO dashed)', sx, [
      { label: 'TTFT p50', values: sweep.map(function (r) { return r.ttft_p50_ms; }), points: true },
      { label: 'TTFT p95', values: sweep.map(function (r) { return r.ttft_p95_ms; }), points: true },
      { label: 'SLO p95', values: sweep.map(function () { return slo; }), dash: true, color: '#d62728' }],
      'offered (' + D.details.unit + ')', 'ms');
  }
  var by = D.plots.extra && D.plots.extra.bystander_timeline;
  if (by && by.length) {
    plot('bystander-charts', 'Second key per second', by.map(function (p) { return p.t_s; }), [
      { label: 'ok/s', values: by.map(function (p) { return p.ok; }), color: '#2ca02c' },
      { label: 'failures/s', values: by.map(function (p) { return p.failures; }), color: '#d62728' }], 's', 'per second');
  }
})();
`;
