// How a fuzz finding and the campaign summary read in a verdict (results.json, console,
// Markdown, HTML all show the test's message, notes and observations).
import { redact } from '../lib/run/redact.ts';
import type { CampaignSummary, Finding } from './campaign.ts';

const MAX_BODY_SHOWN = 1500;

/** The finding's curl line with the whole shrunk body (toCurl cuts bodies at 4000 characters). */
export function fullCurl(f: Finding): string {
  const body = f.case.raw ?? JSON.stringify(f.case.body);
  const head = f.exchange.curl.split(' --data-raw ')[0]!;
  return redact(`${head} --data-raw '${body.replace(/'/g, `'\\''`)}'`);
}

export function shownBody(f: Finding): string {
  const body = f.case.raw ?? JSON.stringify(f.case.body);
  return body.length > MAX_BODY_SHOWN ? `${body.slice(0, MAX_BODY_SHOWN)}… (${body.length} characters; the curl line and the replay hold all of it)` : body;
}

export function describeFinding(f: Finding, n: number): string {
  return [
    `#${n} ${f.signature}`,
    `  seen: ${f.seen} (expected ${f.expected})`,
    `  ${f.origin === 'unshrunk' ? 'request as generated, not shrunk' : f.origin === 'coverage' ? 'coverage request' : f.origin === 'replayed' ? 'replayed request' : 'shrunk request'} (${f.bytes} bytes, ${f.fields} top-level fields${f.shrinkRequests ? `, ${f.shrinkRequests} shrink requests` : ''}${f.rawCount > 1 ? `; ${f.rawCount} generated requests showed it` : ''}): ${f.case.route === 'brain' ? 'POST /brains/{id}/chat' : 'POST /chat/completions'} ${shownBody(f)}`,
    `  replay: ${f.replay}`,
    `  curl: ${fullCurl(f)}`,
    ...f.notes.map((x) => `  note: ${x}`),
  ].join('\n');
}

const list = (rec: Record<string, number>) => Object.entries(rec).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ');

/** What was sent and what came back, for the test's observations. */
export function summaryLines(s: CampaignSummary): string[] {
  return [
    `coverage phase: ${s.coverage.sent} of ${s.coverage.planned} fixed requests sent (${s.coverage.probes} probes, the same for every seed)${s.coverage.splitRequests ? `; ${s.coverage.splitRequests} more to split failing ones into single probes and bisect sizes` : ''}`,
    `fuzz seed ${s.seed}: ${s.sent - s.coverage.sent} of ${s.planned} generated requests sent${s.replay ? ` (replay of ${s.replay})` : ' (random phase)'}${s.stoppedByTimeCap ? ', stopped by FUZZ_TIME_MS' : ''}${s.stoppedByTransport ? `, stopped after ${s.stoppedByTransport} transport failures` : ''}; both phases: ${s.streams} streaming, ${(s.bytes / 1024).toFixed(0)} KiB of bodies, in ${(s.sendMs / 1000).toFixed(1)} s (${s.sendMs ? Math.round((s.sent / s.sendMs) * 1000) : 0} req/s); shrinking ${s.shrinks} failures took ${s.shrinkRequests} more requests`,
    `kinds: ${list(s.byKind)}`,
    `bodies: ${list(s.byLabel)}`,
    `routes: ${list(s.byRoute)}`,
    `statuses: ${list(s.statuses)}${s.throttled ? ` (429 after the retry budget: ${s.throttled}, not judged)` : ''}${s.overloaded ? ` (503: ${s.overloaded}, not judged)` : ''}`,
    ...s.baseline.map((b) => `baseline: ${b}`),
    `raw failures: ${s.rawFailures}${s.unattributed ? `, ${s.unattributed} not attributed to a finding` : ''}`,
  ];
}
