// reports/latest/index.html: one self-contained page (inline CSS and script, a
// Content-Security-Policy that forbids loading anything) for people to read: the
// verdict, totals, outcomes by spec section, a coverage map, the client x operation
// matrix when tests fill one, and every clause of the registry as a row with its
// tests. A failure shows the requirement, expected vs seen, the response (status,
// headers, body excerpt) and the curl that reproduces it. Filter by outcome.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { harnessErrorAdvice, isHarnessError, type TestRecord } from '../../lib/run/verdicts.ts';
import { redact } from '../../lib/run/redact.ts';
import {
  LABEL, OUTCOMES, isFailing, needsDetails, oneLine, outcome, sectionTitle, type ClauseOutcome, type ClauseRow, type Outcome,
} from './outcomes.ts';
import type { ReportModel } from './model.ts';

const esc = (s: string | number | undefined) => redact(String(s ?? ''))
  .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Ticket links in known-failure reasons become links (navigation only: the page itself loads nothing). */
const linkify = (s: string) => esc(s).replace(/https?:\/\/[^\s<>"&]+(?:&amp;[^\s<>"&]+)*/g, (u) => `<a href="${u}" rel="noreferrer">${u}</a>`);

/** Credentials in headers are masked whatever their value; known keys are redacted everywhere anyway. */
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie|x-api-key|api-key)$/i;

const badge = (o: ClauseOutcome) => `<span class="badge o-${o}">${esc(LABEL[o])}</span>`;

function seconds(ms: number | undefined): string {
  return ms === undefined ? '' : ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function header(model: ReportModel): string {
  const { results } = model;
  const c = results.comparison;
  const list = (xs: Array<{ clause: string }>) => xs.length
    ? [...new Set(xs.map((x) => x.clause))].map((id) => `<a href="#clause-${esc(id)}">${esc(id)}</a>`).join(', ')
    : 'none';
  const since = c
    ? `Since the previous run against this target (${esc(c.previousStartedAt)}): newly failing <b class="${c.newlyFailing.length ? 'bad' : ''}">${list(c.newlyFailing)}</b>, newly passing <b>${list(c.newlyPassing)}</b>`
    : esc(model.lines.comparison.replace(/^s/, 'S'));
  const passed = results.exitCode === 0;
  return `<header class="top">
  <div class="title"><h1>chatgate conformance report</h1><span class="banner ${passed ? 'o-pass' : 'o-fail'}" data-exit-code="${results.exitCode}">${results.incomplete ? 'INCOMPLETE' : passed ? 'PASS' : 'FAIL'}</span></div>
  <p class="verdict">${esc(model.lines.verdict)}</p>
  ${model.lines.targetDown ? `<p class="verdict bad" id="target-down">${esc(model.lines.targetDown)}</p>` : ''}
  <dl class="meta">
    <div><dt>Target</dt><dd>${esc(results.target)}</dd></div>
    <div><dt>Started</dt><dd>${esc(results.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))} · ${seconds(results.durationMs)} · ${results.tests.length} tests</dd></div>
    <div><dt>Mode</dt><dd data-mode="${results.strict ? 'strict' : 'normal'}">${esc(model.lines.mode)}</dd></div>
    <div><dt>chatgate</dt><dd>${esc(results.chatgate.version)} · node ${esc(results.chatgate.node)}</dd></div>
  </dl>
  <p class="since">${since}</p>
</header>`;
}

function cards(model: ReportModel): string {
  const { results, counts } = model;
  const shown = model.totalsShown;
  return `<section class="cards" aria-label="Totals">${shown.map((o) =>
    `<div class="card o-${o}${isFailing(o, results) && counts[o] ? ' failing' : ''}" data-outcome="${o}" data-count="${counts[o]}"><span class="n">${counts[o]}</span><span class="l">${esc(LABEL[o])}</span></div>`).join('')}</section>`;
}

function bar(counts: Partial<Record<Outcome, number>>, noTest: number): string {
  const total = OUTCOMES.reduce((n, o) => n + (counts[o] ?? 0), 0) + noTest;
  if (total === 0) return '';
  const seg = (cls: string, n: number, label: string) => n ? `<span class="o-${cls}" style="flex:${n}" title="${n} ${esc(label)}"></span>` : '';
  return `<div class="bar">${OUTCOMES.map((o) => seg(o, counts[o] ?? 0, LABEL[o])).join('')}${seg('no-test', noTest, 'clauses without a test')}</div>`;
}

function sections(model: ReportModel): string {
  const { rows, counts, noTest } = model;
  const cols = model.totalsShown;
  const table = model.sections;
  const body = table.map((s) => `<tr data-section="${esc(s.section)}"><th><a href="#section-${esc(s.section)}">${esc(s.section)}</a> <span class="muted">${esc(s.title)}</span></th><td class="num">${s.clauses}</td>${cols.map((o) => `<td class="num${s.counts[o] ? ` c-${o}` : ' zero'}">${s.counts[o] ?? 0}</td>`).join('')}<td class="num${s.noTest ? ' c-no-test' : ' zero'}">${s.noTest}</td><td class="barcell">${bar(s.counts, s.noTest)}</td></tr>`).join('\n');
  return `<section class="panel" id="by-section"><h2>By spec section</h2>
<table class="sections"><thead><tr><th>Section</th><th class="num">clauses</th>${cols.map((o) => `<th class="num">${badge(o)}</th>`).join('')}<th class="num">${badge('no-test')}</th><th>tests</th></tr></thead>
<tbody>${body}</tbody>
<tfoot><tr><th>All</th><td class="num">${rows.length}</td>${cols.map((o) => `<td class="num">${counts[o]}</td>`).join('')}<td class="num">${noTest}</td><td class="barcell">${bar(counts, noTest)}</td></tr></tfoot></table></section>`;
}

function coverageMap(rows: ClauseRow[]): string {
  const bySection = new Map<string, ClauseRow[]>();
  for (const r of rows) bySection.set(r.section, [...(bySection.get(r.section) ?? []), r]);
  const groups = [...bySection].map(([s, rs]) => `<div class="cov-group"><span class="cov-s">${esc(s)}</span>${rs.map((r) =>
    `<a class="cov o-${r.outcome}" href="#clause-${esc(r.id)}" title="${esc(`${r.id}: ${LABEL[r.outcome]} (${r.tests.length} test${r.tests.length === 1 ? '' : 's'})`)}">${esc(r.id.replace(/^[A-Z]+-/, ''))}</a>`).join('')}</div>`).join('');
  return `<section class="panel" id="coverage"><h2>Coverage <span class="muted">every clause of the registry, worst outcome of its tests</span></h2><div class="covmap">${groups}</div></section>`;
}

function matrixTable(model: ReportModel): string {
  const m = model.matrix;
  if (!m) return '';
  const rows = m.clients.map((c) => `<tr><th>${esc(c)}</th>${m.operations.map((o) => {
    const { tests, worst: w } = m.cell(c, o);
    return w
      ? `<td data-client="${esc(c)}" data-operation="${esc(o)}" data-outcome="${w}" title="${esc(tests.map((t) => `${t.verdict}: ${t.title}`).join('\n'))}">${badge(w)}</td>`
      : '<td class="muted">-</td>';
  }).join('')}</tr>`).join('\n');
  return `<section class="panel" id="matrix"><h2>Client x operation</h2>
<table class="matrix"><thead><tr><th>client</th>${m.operations.map((o) => `<th>${esc(o)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table></section>`;
}

function response(t: TestRecord): string {
  const r = t.response;
  if (!r) return '';
  const headers = Object.entries(r.headers ?? {}).map(([k, v]) => `<tr><th>${esc(k)}</th><td>${SECRET_HEADER.test(k) ? '***' : esc(v)}</td></tr>`).join('');
  return `<div class="resp"><h4>Response</h4>
<div class="status">${r.status !== undefined ? `HTTP ${esc(r.status)}` : 'no response'}${r.transportError ? ` <span class="muted">(${esc(r.transportError)})</span>` : ''}</div>
${headers ? `<table class="headers">${headers}</table>` : ''}
${r.bodyExcerpt ? `<pre class="body">${esc(r.bodyExcerpt)}</pre>` : ''}</div>`;
}

function details(t: TestRecord): string {
  const kv: string[] = [`<dt>Requirement</dt><dd>${esc(t.requirement)}</dd>`];
  if (isHarnessError(t)) kv.push(`<dt>Harness error</dt><dd class="harness-error">${esc(harnessErrorAdvice(oneLine(t.message, 300)))}</dd>`);
  if (t.expectation) {
    const what = t.expectation.outcome === 'unexpected-pass' ? 'Listed as known failure' : t.expectation.outcome === 'expected-fail' ? 'Known failure' : 'Known failure (not confirmed)';
    kv.push(`<dt>${what}</dt><dd>${esc(t.expectation.entry)}: ${linkify(t.expectation.reason)}</dd>`);
  }
  if (t.expected) kv.push(`<dt>Expected</dt><dd class="expected">${esc(t.expected)}</dd>`, `<dt>Seen</dt><dd class="seen">${esc(t.seen)}</dd>`);
  if (t.message && (!t.expected || !t.message.startsWith('expected '))) kv.push(`<dt>Message</dt><dd><pre class="msg">${esc(t.message)}</pre></dd>`);
  if (t.attempts?.length) kv.push(`<dt>Attempts</dt><dd>${t.attempts.map((a, i) => `${i + 1}: ${badge(a.verdict)}`).join(' ')}</dd>`);
  for (const n of t.notes) kv.push(`<dt>Note</dt><dd>${esc(n)}</dd>`);
  const curl = t.curl ? `<div class="curl"><h4>Reproduce <button type="button" class="copy">copy</button></h4><pre>${esc(t.curl)}</pre></div>` : '';
  return `<div class="detail"><dl class="kv">${kv.join('')}</dl>${response(t)}${curl}</div>`;
}

function testItem(t: TestRecord): string {
  const o = outcome(t);
  const text = o === 'unexpected-pass' ? `passed, but listed as a known failure: ${t.expectation!.reason}`
    : o === 'expected-fail' ? `known failure: ${t.expectation!.reason} · ${t.message ?? ''}`
      : t.verdict === 'flaky' ? `passed on attempt ${t.attempts?.length ?? 2} after: ${t.message ?? ''}` : t.message;
  const line = o === 'pass' ? '' : esc(oneLine(text, 220));
  const head = `${badge(o)} <span class="t-title">${esc(t.title)}</span> <span class="t-time">${seconds(t.durationMs)}</span>${line ? `<div class="t-msg">${line}</div>` : ''}`;
  const open = o === 'error' || o === 'fail' || o === 'flaky' || o === 'warn' || o === 'unexpected-pass';
  return needsDetails(t) || o === 'unexpected-pass'
    ? `<li class="test" data-outcome="${o}" data-test-id="${esc(t.id)}"><details${open ? ' open' : ''}><summary>${head}</summary>${details(t)}</details></li>`
    : `<li class="test plain" data-outcome="${o}" data-test-id="${esc(t.id)}"><div class="sum">${head}</div></li>`;
}

function clauseList(model: ReportModel): string {
  const { rows, results, counts } = model;
  const extra = (['no-test', 'not-selected'] as const).filter((o) => rows.some((r) => r.outcome === o));
  const filters = [
    `<button type="button" data-filter="all" aria-pressed="true">all <span>${results.tests.length}</span></button>`,
    ...OUTCOMES.filter((o) => counts[o] > 0).map((o) => `<button type="button" data-filter="${o}" class="o-${o}" aria-pressed="false">${esc(LABEL[o])} <span>${counts[o]}</span></button>`),
    ...extra.map((o) => `<button type="button" data-filter="${o}" class="o-${o}" aria-pressed="false">${esc(LABEL[o])} <span>${rows.filter((r) => r.outcome === o).length}</span></button>`),
  ].join('');
  let section = '';
  const items: string[] = [];
  for (const r of rows) {
    if (r.section !== section) {
      if (section) items.push('</div>');
      section = r.section;
      items.push(`<div class="sec" id="section-${esc(section)}"><h3>${esc(section)} <span class="muted">${esc(sectionTitle(section))}</span></h3>`);
    }
    const chips = OUTCOMES.filter((o) => r.counts[o]).map((o) => `<span class="chip o-${o}">${r.counts[o]} ${esc(LABEL[o])}</span>`).join('');
    const open = r.tests.some((t) => ['error', 'fail', 'unexpected-pass', 'flaky', 'warn', 'expected-fail'].includes(outcome(t)));
    items.push(`<details class="clause" id="clause-${esc(r.id)}" data-clause="${esc(r.id)}" data-outcome="${r.outcome}" data-tests="${r.tests.length}"${open ? ' open' : ''}>
<summary class="crow"><span class="cid">${esc(r.id)}</span><span class="lvl l-${esc(r.level)}">${esc(r.level)}</span><span class="req">${esc(r.requirement)}</span><span class="ntests">${r.tests.length} test${r.tests.length === 1 ? '' : 's'}</span><span class="chips">${chips}</span>${badge(r.outcome)}</summary>
${r.tests.length ? `<ul class="tests">${r.tests.map(testItem).join('\n')}</ul>` : `<p class="none">${r.outcome === 'not-selected' ? 'Not selected in this run (CLAUSES).' : 'No test checks this clause.'}</p>`}
</details>`);
  }
  if (section) items.push('</div>');
  return `<section class="panel" id="clauses"><h2>Clauses <span class="muted">one row per clause, with its tests</span></h2>
<div class="filters" role="toolbar" aria-label="Filter by outcome">${filters}<span class="shown" id="shown" data-shown="${results.tests.length}">${results.tests.length} test${results.tests.length === 1 ? '' : 's'} shown</span></div>
${items.join('\n')}</section>`;
}

const CSS = `
:root{--fg:#1f2328;--muted:#656d76;--line:#d0d7de;--bg:#f6f8fa;--card:#fff;
--error:#6639ba;--fail:#cf222e;--unexpected-pass:#bf3989;--flaky:#bc4c00;--warn:#9a6700;--expected-fail:#8250df;--inconclusive:#6e7781;--skip:#8c959f;--info:#0969da;--pass:#1a7f37;--no-test:#afb8c1;--not-selected:#d0d7de}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:var(--bg)}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.muted{color:var(--muted);font-weight:400}
header.top{background:#fff;border-bottom:1px solid var(--line);padding:20px 32px 14px}
.title{display:flex;align-items:center;gap:14px}
h1{font-size:22px;margin:0}
h2{font-size:17px;margin:0 0 12px}
h3{font-size:14px;margin:18px 0 6px;padding-bottom:4px;border-bottom:1px solid var(--line)}
h4{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);margin:10px 0 4px}
.banner{font-weight:700;font-size:15px;padding:3px 14px;border-radius:6px;color:#fff}
.banner.o-pass{background:var(--pass)}.banner.o-fail{background:var(--fail)}
.verdict{margin:6px 0 10px;font-weight:600}
dl.meta{display:grid;grid-template-columns:repeat(auto-fit,minmax(260px,1fr));gap:6px 24px;margin:0}
dl.meta div{min-width:0}dl.meta dt{font-size:11px;text-transform:uppercase;letter-spacing:.05em;color:var(--muted)}
dl.meta dd{margin:0;overflow-wrap:anywhere}
.since{margin:10px 0 0;padding:6px 10px;background:var(--bg);border-radius:6px;font-size:13px}
.since .bad{color:var(--fail)}
main{padding:18px 32px 40px;max-width:1500px}
.cards{display:flex;flex-wrap:wrap;gap:10px;margin-bottom:16px}
.card{background:var(--card);border:1px solid var(--line);border-top:4px solid var(--c);border-radius:8px;padding:8px 16px;min-width:110px}
.card .n{display:block;font-size:26px;font-weight:700;color:var(--c)}
.card .l{color:var(--muted);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card.failing{box-shadow:0 0 0 2px var(--c) inset}
.panel{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px 18px;margin-bottom:16px;overflow-x:auto}
table{border-collapse:collapse}
table.sections{width:100%}
.sections th,.sections td{padding:5px 6px;border-bottom:1px solid #eaeef2;text-align:left;white-space:nowrap}
.sections thead th{font-size:12px;border-bottom:1px solid var(--line)}
.sections thead .badge{font-size:10px;padding:1px 5px}
.sections tfoot th,.sections tfoot td{font-weight:700;border-bottom:0}
.num{text-align:right!important;font-variant-numeric:tabular-nums}
td.zero{color:#c4cad0}
${OUTCOMES.map((o) => `td.c-${o}{color:var(--${o});font-weight:600}`).join('')}td.c-no-test{color:var(--muted);font-weight:600}
.barcell{width:30%;min-width:90px}
.bar{display:flex;height:12px;border-radius:3px;overflow:hidden;background:#eaeef2}
.bar span{display:block;background:var(--c)}
${[...OUTCOMES, 'no-test', 'not-selected'].map((o) => `.o-${o}{--c:var(--${o})}`).join('')}
.o-no-test{--c:var(--no-test)}
.badge{display:inline-block;font-size:11px;font-weight:700;text-transform:uppercase;letter-spacing:.03em;padding:1px 7px;border-radius:10px;color:#fff;background:var(--c);white-space:nowrap}
.badge.o-no-test,.badge.o-not-selected{color:var(--fg);background:repeating-linear-gradient(135deg,#eaeef2 0 4px,#fff 4px 8px);border:1px solid var(--line)}
.pair{display:grid;grid-template-columns:minmax(0,1fr) auto;gap:16px;align-items:start}
@media (max-width:1100px){.pair{grid-template-columns:minmax(0,1fr)}}
.covmap{display:flex;flex-wrap:wrap;gap:10px 18px}
.cov-group{display:flex;align-items:center;gap:3px;flex-wrap:wrap}
.cov-s{font-size:11px;font-weight:700;color:var(--muted);margin-right:3px}
.cov{display:inline-flex;align-items:center;justify-content:center;min-width:26px;height:22px;padding:0 3px;border-radius:4px;background:var(--c);color:#fff;font-size:10px;font-weight:700}
.cov.o-no-test,.cov.o-not-selected{color:var(--muted);background:repeating-linear-gradient(135deg,#eaeef2 0 4px,#fff 4px 8px);border:1px solid var(--line)}
table.matrix th,table.matrix td{border:1px solid var(--line);padding:4px 8px;text-align:center;font-size:12px}
table.matrix tbody th{text-align:left}
.filters{display:flex;flex-wrap:wrap;align-items:center;gap:6px;margin-bottom:8px;position:sticky;top:0;background:#fff;padding:8px 0;z-index:2}
.filters button{font:inherit;font-size:12px;border:1px solid var(--line);background:#fff;border-radius:14px;padding:2px 10px;cursor:pointer;border-left:4px solid var(--c,#57606a)}
.filters button span{font-weight:700}
.filters button[aria-pressed=true]{background:var(--c,#57606a);color:#fff;border-color:var(--c,#57606a)}
.shown{margin-left:auto;color:var(--muted);font-size:12px}
details.clause{border-bottom:1px solid #eaeef2}
summary{cursor:pointer}
.crow{display:grid;grid-template-columns:80px 62px 1fr 62px minmax(120px,auto) 116px;gap:10px;align-items:center;padding:5px 4px;list-style:none}
.crow::-webkit-details-marker{display:none}
.crow:hover{background:#f6f8fa}
.crow .badge{justify-self:end}
.cid{font-weight:700;font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
.lvl{font-size:11px;font-weight:600;color:var(--muted)}.l-MUST{color:#1f2328}
.ntests{color:var(--muted);font-size:12px;text-align:right}
.chips{display:flex;gap:4px;flex-wrap:wrap;justify-content:flex-end}
.chip{font-size:11px;color:var(--c);border:1px solid var(--c);border-radius:9px;padding:0 6px;white-space:nowrap}
ul.tests{list-style:none;margin:0 0 8px 90px;padding:0}
li.test{border-left:3px solid var(--c);margin:4px 0;padding:2px 8px;background:#fbfcfd}
li.test summary,li.test .sum{padding:2px 0}
.t-title{font-weight:500}.t-time{color:var(--muted);font-size:12px}
.t-msg{color:var(--muted);font-size:12px;margin-left:2px;overflow-wrap:anywhere}
li.test summary .t-msg{display:block}
.none{color:var(--muted);margin:2px 0 8px 90px;font-style:italic}
.detail{margin:6px 0 8px;padding:8px 12px;background:#fff;border:1px solid var(--line);border-radius:6px}
dl.kv{display:grid;grid-template-columns:150px 1fr;gap:3px 12px;margin:0}
dl.kv dt{color:var(--muted);font-size:12px}dl.kv dd{margin:0;overflow-wrap:anywhere}
dd.expected{color:var(--pass)}dd.seen{color:var(--fail)}
pre{margin:0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
pre.body,.curl pre{background:#f6f8fa;border:1px solid #eaeef2;border-radius:4px;padding:6px 8px;max-height:220px;overflow:auto}
.status{font-weight:700;font-family:ui-monospace,monospace}
table.headers{font:12px ui-monospace,monospace;margin:4px 0}
table.headers th{text-align:left;color:var(--muted);padding:0 12px 0 0;font-weight:400;vertical-align:top}
.copy{font-size:11px;border:1px solid var(--line);background:#fff;border-radius:4px;cursor:pointer;margin-left:6px;text-transform:none;letter-spacing:0}
details[open]>summary .t-msg{display:none}
[hidden]{display:none!important}
`;

// Filters by outcome (tests and their clauses), and copies curl lines.
const SCRIPT = `
(function(){
  var buttons=[].slice.call(document.querySelectorAll('.filters button'));
  var clauses=[].slice.call(document.querySelectorAll('details.clause'));
  var shown=document.getElementById('shown');
  function apply(f){
    var n=0;
    buttons.forEach(function(b){b.setAttribute('aria-pressed',String(b.dataset.filter===f));});
    clauses.forEach(function(c){
      var tests=[].slice.call(c.querySelectorAll('li.test')),any=false;
      tests.forEach(function(t){var on=f==='all'||t.dataset.outcome===f;t.hidden=!on;if(on){any=true;n++;}});
      var on=f==='all'||any||c.dataset.outcome===f;
      c.hidden=!on;
      if(on&&f!=='all'&&any)c.open=true;
    });
    [].slice.call(document.querySelectorAll('.sec')).forEach(function(s){s.hidden=!s.querySelector('details.clause:not([hidden])');});
    shown.dataset.shown=String(n);shown.textContent=n+(n===1?' test shown':' tests shown');
  }
  buttons.forEach(function(b){b.addEventListener('click',function(){apply(b.dataset.filter);});});
  document.addEventListener('click',function(e){
    var b=e.target.closest&&e.target.closest('button.copy');if(!b)return;
    var pre=b.closest('.curl').querySelector('pre'),text=pre.textContent;
    var done=function(){b.textContent='copied';setTimeout(function(){b.textContent='copy';},1200);};
    if(navigator.clipboard&&navigator.clipboard.writeText)navigator.clipboard.writeText(text).then(done,function(){});
    else{var r=document.createRange();r.selectNodeContents(pre);getSelection().removeAllRanges();getSelection().addRange(r);}
  });
})();`;

export function renderHtml(model: ReportModel): string {
  const { results, rows } = model;
  const title = `chatgate ${results.exitCode === 0 ? 'PASS' : 'FAIL'}: ${results.target}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head>
<body>
${header(model)}
<main>
${cards(model)}
${sections(model)}
${model.matrix ? `<div class="pair">${coverageMap(rows)}${matrixTable(model)}</div>` : coverageMap(rows)}
${clauseList(model)}
</main>
<script>${SCRIPT}</script>
</body></html>
`;
}

export function writeHtml(dir: string, model: ReportModel): string {
  const file = join(dir, 'index.html');
  writeFileSync(file, renderHtml(model));
  return file;
}
