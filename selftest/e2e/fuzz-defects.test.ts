// The fuzz phase, proven both ways.
// 1. Every fuzz-only defect (reference/defects.ts, foundBy: 'fuzz') gets one run of the
//    section suites plus the fuzz phase, fixed seed: the fixed probes pass (every one
//    of them a pass, not merely no fail) on the defect's clauses (their tests and the
//    run-wide checks, which leave ERR-1 and ERR-2 on generated requests to the fuzz
//    tests), the fuzz test of each clause fails with a minimised request (a coverage
//    probe alone, or a shrunk one) no bigger than the defect needs, and the replay
//    command it prints reproduces the same failure (fuzz-seeds.test.ts: the same
//    verdicts over 10 seeds).
// 2. No false findings: in-process campaigns (the suite's own runCampaign, without the
//    vitest wrapper) against the reference over several seeds, every legal variant and the
//    independent server end with no finding.
// 3. Same seed = same requests; the knobs are validated like every other variable.
import { afterAll, describe, expect, it } from 'vitest';
import { DEFECTS } from '../../reference/defects.ts';
import { countsAsPassing } from '../../lib/run/verdicts.ts';
import { VARIANTS } from '../../reference/variants.ts';
import { startReferenceServer } from '../../reference/server.ts';
import { HttpClient, type Exchange, type RequestSpec } from '../../lib/http/http-client.ts';
import { ConfigError, loadFuzzConfig } from '../../lib/run/config.ts';
import { randomBudget, runCampaign, type CampaignResult } from '../../fuzz/campaign.ts';
import { coverageCases } from '../../fuzz/coverage.ts';
import { startIndependentServer, type IndependentServerOptions } from '../fixtures/independent-server.ts';
import { runSuite } from '../support/run-suite.ts';
import { limiter, HANG_GUARD_MS } from '../support/limit.ts';
import { publishTable } from '../support/table.ts';
import { SECTION_FILES } from '../support/suite-files.ts';

const SEED = '7';
/** The default budget (FUZZ_RUNS unset) catches every one of them with this seed. */
const RUNS = '200';
/** Replays cost a run each: one defect per kind of finding (crash on a parameter, on text, a stream, an error body, raw text, the brain route). */
const REPLAYED = new Set(['fuzz-top-p-max-500', 'fuzz-stop-array-500', 'fuzz-nul-500', 'fuzz-messages-400-no-body', 'fuzz-trailing-garbage-accepted', 'fuzz-brain-tool-role-500']);
const FUZZ_FILE = 'suites/fuzz.test.ts';
const slot = limiter(2);
const rows = new Map<string, string[]>();

/** The largest shrunk request each defect may be reported with: what it needs plus the model/message frame. */
const SHRUNK_AT_MOST: Record<string, { bytes: number; fields: number; check?: (body: unknown) => boolean }> = {
  'fuzz-temperature-type-500': { bytes: 110, fields: 4 },
  'fuzz-max-tokens-huge-500': { bytes: 120, fields: 4 },
  'fuzz-stop-array-500': { bytes: 110, fields: 4 },
  'fuzz-deep-unknown-500': { bytes: 160, fields: 4 },
  'fuzz-developer-role-500': { bytes: 100, fields: 3 },
  'fuzz-nul-500': { bytes: 100, fields: 3 },
  'fuzz-lone-surrogate-500': { bytes: 100, fields: 3 },
  // 33 messages is the threshold; the frame of each is ~35 bytes.
  'fuzz-many-messages-500': { bytes: 1400, fields: 3, check: (b) => (b as { messages: unknown[] }).messages.length === 33 },
  // The smallest array content may be an image part whose url is null (a generated null field), streaming: 121 bytes.
  'fuzz-content-parts-500': { bytes: 130, fields: 3 },
  'fuzz-brain-tool-role-500': { bytes: 120, fields: 3 },
  'fuzz-messages-400-no-body': { bytes: 70, fields: 3 },
  'fuzz-model-bool-accepted': { bytes: 90, fields: 3 },
  'fuzz-later-content-accepted': { bytes: 140, fields: 3 },
  'fuzz-stream-number-accepted': { bytes: 110, fields: 4 },
  'fuzz-trailing-garbage-accepted': { bytes: 120, fields: 0 },
  'fuzz-temperature-string-500': { bytes: 110, fields: 4 },
  'fuzz-top-p-max-500': { bytes: 110, fields: 4 },
  'fuzz-stop-empty-500': { bytes: 110, fields: 4 },
  // A message with a name, a parameter out of range, a not-quite-JSON body: each in its smallest coverage request.
  'fuzz-noisy-three-clauses': { bytes: 130, fields: 4 },
  // Three stop sequences (the coverage phase's lengths); a "$" key at each message level: a tool call's needs its assistant turn and the tool's answer.
  'fuzz-stop-length-500': { bytes: 110, fields: 4, check: (b) => (b as { stop: unknown[] }).stop.length === 3 },
  'fuzz-dollar-key-500': { bytes: 290, fields: 3, check: (b) => JSON.stringify(b).includes('"$":') },
};

const FUZZ_ONLY = Object.entries(DEFECTS).filter(([, d]) => d.foundBy === 'fuzz');

interface Shown { signature: string; bytes: number; fields: number; body?: unknown; replay: string }

/** The findings a fuzz test's `seen` lists (fuzz/report.ts's layout). */
function findingsIn(seen: string): Shown[] {
  const out: Shown[] = [];
  for (const block of seen.split(/\n(?=#\d+ )/)) {
    const sig = /^#\d+ (.*)$/m.exec(block)?.[1];
    const size = /(?:shrunk request|coverage request|replayed request|request as generated, not shrunk) \((\d+) bytes, (\d+) top-level fields.*?\): POST \S+ (.*)$/m.exec(block);
    const replay = /^ {2}replay: (.*)$/m.exec(block)?.[1];
    if (!sig || !size || !replay) continue;
    let body: unknown;
    try { body = JSON.parse(size[3]!); } catch { body = undefined; }
    out.push({ signature: sig, bytes: Number(size[1]), fields: Number(size[2]), body, replay });
  }
  return out;
}

describe.concurrent('fuzz-only defects: the fixed probes miss them, the fuzz phase catches them shrunk', () => {
  for (const [name, defect] of FUZZ_ONLY) {
    it(`${name}: ${defect.clauses.join(', ')}`, async () => {
      await slot(async () => {
        const run = await runSuite(
          { REFERENCE_DEFECT: name, TIMEOUT_MS: '10000', STRICT: '1', RATE_LIMIT_PROBE_MAX: '0', FUZZ_SEED: SEED },
          { args: [...SECTION_FILES, 'fuzz'] },
        );
        const tests = run.results?.tests ?? [];
        expect(tests.length, run.stderr.slice(0, 500)).toBeGreaterThan(0);
        const limit = SHRUNK_AT_MOST[name]!;
        expect(limit, `${name} needs a size bound in SHRUNK_AT_MOST`).toBeDefined();
        let first: { clause: string; finding: Shown } | undefined;
        const sizes: string[] = [];
        for (const clause of defect.clauses) {
          const fixed = tests.filter((t) => t.clause === clause && t.file !== FUZZ_FILE);
          expect(fixed.length, `fixed probes of ${clause}`).toBeGreaterThan(0);
          // Clean means their tests pass: an error, inconclusive or skip is no evidence the probes missed the defect.
          expect(fixed.filter((t) => !countsAsPassing(t)).map((t) => `${t.id} ${t.verdict}: ${t.message}`), `fixed probes of ${clause} that do not pass`).toEqual([]);
          const fz = tests.find((t) => t.clause === clause && t.file === FUZZ_FILE);
          expect(fz?.verdict, `fuzz test of ${clause}: ${fz?.message?.slice(0, 300)}`).toMatch(/^(fail|warn)$/);
          const shown = findingsIn(fz!.seen ?? '');
          expect(shown.length, fz!.seen).toBeGreaterThan(0);
          for (const f of shown) {
            expect(f.bytes, `shrunk request of ${f.signature}`).toBeLessThanOrEqual(limit.bytes);
            expect(f.fields, `fields of ${f.signature}`).toBeLessThanOrEqual(limit.fields);
            if (limit.check && f.body !== undefined) expect(limit.check(f.body), `${f.signature}: ${JSON.stringify(f.body).slice(0, 200)}`).toBe(true);
            sizes.push(`${clause} ${f.bytes} B/${f.fields} fields`);
          }
          first ??= { clause, finding: shown[0]! };
          expect(fz!.curl, 'a curl line').toMatch(/^curl /);
          expect(fz!.notes.join(' ')).toContain(`FUZZ_SEED=${SEED}`);
        }
        // The replay command, as printed, reproduces the first finding: same clause, same signature.
        if (!REPLAYED.has(name)) {
          rows.set(name, [name, defect.clauses.join(', '), 'clean', 'caught', sizes.join('; '), '-', `${(run.wallMs / 1000).toFixed(1)} s`]);
          return;
        }
        const env = Object.fromEntries([...first!.finding.replay.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
        expect(env).toMatchObject({ REFERENCE_DEFECT: name, FUZZ_SEED: SEED });
        const replay = await runSuite({ ...env, TIMEOUT_MS: '10000', STRICT: '1' }, { args: ['fuzz'] });
        const again = replay.results?.tests.find((t) => t.clause === first!.clause && t.file === FUZZ_FILE);
        expect(again?.verdict, replay.stderr.slice(0, 300)).toMatch(/^(fail|warn)$/);
        expect(findingsIn(again!.seen ?? '').map((f) => f.signature)).toContain(first!.finding.signature);
        expect(again!.observations?.join(' ')).toContain('1 of 1 generated requests sent');
        rows.set(name, [name, defect.clauses.join(', '), 'clean', 'caught', sizes.join('; '), 'reproduced', `${((run.wallMs + replay.wallMs) / 1000).toFixed(1)} s`]);
      });
    }, 600_000); // includes the wait for a slot: two runs at a time
  }
});

// --- no false findings ------------------------------------------------------------------

async function campaign(target: { url: string; key: string; brainId?: string }, seed: number, runs: number): Promise<CampaignResult> {
  const http = new HttpClient({ baseUrl: target.url, timeoutMs: 10_000 });
  try {
    return await runCampaign({
      send: (spec) => http.send(spec), auth: { key: target.key }, models: ['svc-auto', 'svc'], brainId: target.brainId,
      fuzz: { runs, seed, timeMs: 120_000, concurrency: 8, maxBodyBytes: 64 * 1024, replay: undefined },
    });
  } finally { await http.close(); }
}

function clean(r: CampaignResult): void {
  expect(r.findings.map((f) => `${f.signature}: ${f.seen}`)).toEqual([]);
  expect(r.summary.coverage.sent).toBe(r.summary.coverage.planned);
  expect(r.summary.sent).toBe(r.summary.coverage.planned + r.summary.planned);
}

const falseRows: string[][] = [];

describe('no false findings on conformant servers', () => {
  it('the reference: 3 seeds x 1000 generated requests', async () => {
    const ref = await startReferenceServer({});
    try {
      for (const seed of [1, 2, 3]) {
        const r = await campaign({ url: ref.url, key: ref.keys.main, brainId: ref.brainId }, seed, 1000);
        falseRows.push(['reference', String(seed), String(r.summary.sent), JSON.stringify(r.summary.statuses), String(r.findings.length)]);
        clean(r);
      }
    } finally { await ref.close(); }
  }, HANG_GUARD_MS);

  it('every legal variant: 150 generated requests each', async () => {
    // Six at a time: the rate-limit variants spend half a minute each waiting out their windows (the
    // 53 campaigns one after another took 175 s for 33 CPU-seconds), each against its own server.
    const variantSlot = limiter(6);
    const results = await Promise.all(Object.keys(VARIANTS).map((name) => variantSlot(async () => {
      const ref = await startReferenceServer({ variants: [name] });
      try {
        return [name, await campaign({ url: ref.url, key: ref.keys.main, brainId: ref.brainId }, 5, 150)] as const;
      } finally { await ref.close(); }
    })));
    for (const [name, r] of results) {
      falseRows.push([`variant ${name}`, '5', String(r.summary.sent), JSON.stringify(r.summary.statuses), String(r.findings.length)]);
      clean(r);
    }
  }, HANG_GUARD_MS);

  it('the independent server: 3 configurations x 300 generated requests', async () => {
    const keys = { main: 'sk-indep-main-5f0c2a9e7d1b4c3a', limited: 'sk-indep-limited-8e2d4f6a1c3b', rateLimit: 'sk-indep-rate-3a7c9e1f5b2d' };
    const brainId = '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c';
    const choices: IndependentServerOptions['choices'][] = [{}, { lineEnd: '\r', oneChunk: true, gzip: true }, { lineEnd: '\n', gzip: true }];
    for (const [i, c] of choices.entries()) {
      const srv = await startIndependentServer({ keys, brainId, choices: c });
      try {
        const r = await campaign({ url: srv.url, key: keys.main, brainId }, 10 + i, 300);
        falseRows.push([`independent ${JSON.stringify(c)}`, String(10 + i), String(r.summary.sent), JSON.stringify(r.summary.statuses), String(r.findings.length)]);
        clean(r);
      } finally { await srv.close(); }
    }
  }, HANG_GUARD_MS);
});

// --- reproducibility and knobs ----------------------------------------------------------

describe('reproducible and configurable', () => {
  it('the same seed sends the same requests, another seed others', async () => {
    const seen = async (seed: number) => {
      const bodies: string[] = [];
      const send = async (spec: RequestSpec): Promise<Exchange> => {
        bodies.push(`${spec.path} ${spec.body ?? JSON.stringify(spec.json)}`);
        return { seq: 0, request: { method: 'POST', url: '', headers: {} }, status: 400, headers: { 'content-type': 'application/json' }, mediaType: 'application/json', text: '{"error":{"message":"m","type":"t","code":"c"}}', json: { error: { message: 'm', type: 't', code: 'c' } }, durationMs: 0, wireBytes: 0, retries: [], keyEchoes: [], curl: 'curl' };
      };
      // Concurrency 8 sends in any order; the set of requests and each case's body are what the seed fixes.
      await runCampaign({ send, auth: { key: 'k' }, models: ['svc-auto', 'svc'], brainId: '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c', fuzz: { runs: 300, seed, timeMs: 60_000, concurrency: 8, maxBodyBytes: 65536, replay: undefined } });
      return bodies.sort();
    };
    const a = await seen(42);
    // The three ordinary baseline requests, the coverage phase (a 400 with an error body fails no oracle: nothing to split), then the random ones.
    const coverage = coverageCases({ models: ['svc-auto', 'svc'], brainId: '6a0f3c2e-8b1d-4e5f-9a7c-2d4b6e8f0a1c', maxBodyBytes: 65536 }).length;
    expect(a).toHaveLength(3 + coverage + randomBudget(300, coverage));
    expect(await seen(42)).toEqual(a);
    const other = await seen(43);
    // The coverage phase is the same for every seed; the random requests are not.
    expect(other.filter((b) => a.includes(b)).length - coverage).toBeLessThan(30);
  });

  it('FUZZ_* values are checked like every other variable', async () => {
    const bad = (env: Record<string, string>, variable: string) => {
      let err: unknown;
      try { loadFuzzConfig(env); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(variable);
    };
    bad({ FUZZ_RUNS: 'many' }, 'FUZZ_RUNS');
    bad({ FUZZ_SEED: '-1' }, 'FUZZ_SEED');
    bad({ FUZZ_TIME_MS: '10' }, 'FUZZ_TIME_MS');
    bad({ FUZZ_CONCURRENCY: '0' }, 'FUZZ_CONCURRENCY');
    bad({ FUZZ_MAX_BODY_BYTES: '12' }, 'FUZZ_MAX_BODY_BYTES');
    bad({ FUZZ_REPLAY: '3@0', }, 'FUZZ_SEED');
    bad({ FUZZ_SEED: '1', FUZZ_REPLAY: 'x' }, 'FUZZ_REPLAY');
    expect(loadFuzzConfig({})).toMatchObject({ runs: 200, seed: undefined, replay: undefined });
    expect(loadFuzzConfig({ FUZZ_SEED: '9', FUZZ_REPLAY: '17@0:3:1' }).replay).toEqual({ caseIndex: 17, path: '0:3:1' });
    // Coverage requests: k@c, one probe k@c:j, at a size k@c:j:n.
    expect(loadFuzzConfig({ FUZZ_SEED: '9', FUZZ_REPLAY: '4@c:2:33' }).replay).toEqual({ caseIndex: 4, path: 'c:2:33' });
    bad({ FUZZ_SEED: '1', FUZZ_REPLAY: '4@c:x' }, 'FUZZ_REPLAY');
    bad({ FUZZ_SEED: '1', FUZZ_REPLAY: '4@c:1:2:3' }, 'FUZZ_REPLAY');
    // The runner turns it into one line and exit 2 before any request.
    const run = await runSuite({ FUZZ_RUNS: 'lots' });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/^chatgate: configuration error: FUZZ_RUNS: "lots" is not a whole number/);
  });
});

afterAll(() => {
  const all = FUZZ_ONLY.map(([n, d]) => rows.get(n) ?? [n, d.clauses.join(', '), '(not run)', 'not run', '', '', '']);
  publishTable('fuzz-defects', 'Fuzz-only defects', ['defect', 'declared clauses', 'fixed probes', 'fuzz phase', 'shrunk requests', 'replay', 'run time'], all,
    `${all.filter((r) => r[3] === 'caught').length} of ${all.length} fuzz-only defects caught by the fuzz phase (FUZZ_SEED=${SEED}, FUZZ_RUNS=${RUNS}) and missed by the fixed probes.`);
  if (falseRows.length) {
    publishTable('fuzz-clean', 'Fuzz runs against conformant servers', ['server', 'seed', 'requests', 'statuses', 'findings'], falseRows,
      `${falseRows.reduce((n, r) => n + Number(r[2]), 0)} generated requests, ${falseRows.filter((r) => r[4] === '0').length} of ${falseRows.length} runs without a finding.`);
  }
});
