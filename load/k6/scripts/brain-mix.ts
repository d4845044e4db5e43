// A traffic mix: plain models, the brain:<uuid> model form and the
// POST /brains/{id}/chat route, each its own arrival-rate scenario carrying its
// share of RATE (MIX=models=60,brain-model=20,brain-route=20), so each class gets
// its own latency and failure thresholds (tag kind) while they load the target
// together. Every answer is checked against schemas/chat-completion.schema.json
// (BRAIN-1: the brain route answers a chat completion too).
//   k6 run --no-usage-report -e RATE=20 -e DURATION=5m load/k6/dist/brain-mix.js
import exec from 'k6/execution';
import { expectedStatuses, setResponseCallback } from 'k6/http';
import type { Options, Scenario, Threshold } from 'k6/options';
import { ConfigError, env, targetConfig } from '../lib/config.ts';
import { addLimitThresholds, arrivalScenario, commonThresholds, loadSettings, SUMMARY_TREND_STATS, thresholdSettings } from '../lib/load.ts';
import { chatBody, judgeCompletion, postJson } from '../lib/chat.ts';
import { distributionThresholds } from '../lib/distributions.ts';
import { summaryHandler, type SummaryData } from '../lib/summary.ts';
import { checkTarget, setupTimeout } from '../lib/reachability.ts';

const cfg = targetConfig({ brain: true });
const load = loadSettings({ rate: 10, duration: '1m' });
const limits = thresholdSettings({ p95Ms: 10000 });

setResponseCallback(expectedStatuses({ min: 200, max: 299 }, 429));

type Kind = 'models' | 'brain-model' | 'brain-route';
const EXEC: Record<Kind, string> = { models: 'models', 'brain-model': 'brainModel', 'brain-route': 'brainRoute' };

function parseMix(raw: string): Array<{ kind: Kind; weight: number }> {
  const out: Array<{ kind: Kind; weight: number }> = [];
  for (const part of raw.split(',')) {
    const m = /^\s*([a-z-]+)\s*=\s*(\d+)\s*$/.exec(part);
    if (!m || !(m[1]! in EXEC)) throw new ConfigError('MIX', `"${part.trim()}" is not kind=weight with kind models, brain-model or brain-route; e.g. MIX=models=60,brain-model=20,brain-route=20`);
    out.push({ kind: m[1] as Kind, weight: Number(m[2]) });
  }
  if (out.every((p) => p.weight === 0)) throw new ConfigError('MIX', 'gives every kind weight 0; give at least one a positive weight');
  return out.filter((p) => p.weight > 0);
}

const mix = parseMix(env('MIX') ?? 'models=60,brain-model=20,brain-route=20');
const total = mix.reduce((s, p) => s + p.weight, 0);

const scenarios: Record<string, Scenario> = {};
const thresholds: Record<string, Threshold[]> = commonThresholds(limits);
for (const { kind, weight } of mix) {
  scenarios[kind.replace('-', '_')] = arrivalScenario(load, weight / total, { exec: EXEC[kind] });
  thresholds[`http_req_duration{kind:${kind},status:200}`] = [`p(95)<${limits.p95Ms}`];
  thresholds[`http_req_failed{kind:${kind}}`] = [`rate<${limits.maxFailureRate}`];
}

addLimitThresholds(thresholds, { error_share: ['http_req_failed', 'rate'], latency_p95_ms: ['http_req_duration{status:200}', 'p(95)'] });
export const options: Options = { scenarios, thresholds: { ...thresholds, ...distributionThresholds(['req_ms']) }, summaryTrendStats: SUMMARY_TREND_STATS, setupTimeout: setupTimeout(cfg) };

const CHAT_URL = `${cfg.targetUrl}/chat/completions`;
const BRAIN_URL = `${cfg.targetUrl}/brains/${cfg.brainId}/chat`;

export function models(): void {
  const model = cfg.models[(exec.vu.idInTest + exec.vu.iterationInScenario) % cfg.models.length]!;
  const tags = { name: 'POST /chat/completions', kind: 'models', model };
  judgeCompletion(postJson(CHAT_URL, chatBody(model), cfg.apiKey, tags, cfg.timeoutMs), tags);
}

export function brainModel(): void {
  const tags = { name: 'POST /chat/completions (brain:<uuid>)', kind: 'brain-model' };
  judgeCompletion(postJson(CHAT_URL, chatBody(`brain:${cfg.brainId}`), cfg.apiKey, tags, cfg.timeoutMs), tags);
}

export function brainRoute(): void {
  // The route names the brain; the body carries only the messages (BRAIN-1).
  const tags = { name: 'POST /brains/{id}/chat', kind: 'brain-route' };
  judgeCompletion(postJson(BRAIN_URL, chatBody(undefined), cfg.apiKey, tags, cfg.timeoutMs), tags);
}

const RUN: Record<Kind, () => void> = { models, 'brain-model': brainModel, 'brain-route': brainRoute };

/** One request of the mix, picked by weight: what `k6 run --iterations N` without scenarios sends. */
export default function (): void {
  let r = Math.random() * total;
  for (const p of mix) {
    r -= p.weight;
    if (r < 0) return RUN[p.kind]();
  }
  RUN[mix[mix.length - 1]!.kind]();
}

/** Before any load: the key is set and the target gives an HTTP answer (lib/reachability.ts). */
export function setup(): void {
  checkTarget(cfg);
}

const summarize = summaryHandler('brain-mix', options);
export function handleSummary(data: SummaryData): Record<string, string> {
  return summarize(data);
}
