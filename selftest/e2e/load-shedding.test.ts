// Load shedding judged under load: the rate-limit scenario against the conformant
// reference (429 with error body and consistent hints, an honoured retry succeeds,
// recovery, a second key unaffected) and against its rate-limit defects; and 500/503
// under overload in the stream scenario. The reference runs in this process: these
// are verdict tests, not timing tests.
import { describe, expect, it } from 'vitest';
import { startReferenceServer, type ReferenceOptions } from '../../reference/server.ts';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs, type Scenario } from '../../load/setup/options.ts';
import { executeRun, type RunOutcome } from '../../load/run.ts';
import { referenceTarget } from '../../load/setup/load-target.ts';
import { StopToken } from '../../load/setup/stop.ts';

// A fast ramp: 5, 10, 20, 40 req/s in 0.6 s steps against the reference's 10 req/s key.
const FAST_RAMP = ['--ramp-start', '5', '--ramp-factor', '2', '--ramp-max', '80', '--ramp-step-duration', '0.6', '--burst-duration', '1', '--bystander-rate', '10', '--recovery-max', '3'];

async function run(scenario: Scenario, ref: ReferenceOptions, flags: string[]): Promise<RunOutcome> {
  const server = await startReferenceServer({ latency: { jsonMs: 5, ttftMs: 20, itlMs: 5 }, replyWords: 6, ...ref });
  try {
    const { options } = parseArgs([scenario, '--quiet', '--warmup', '2', ...flags], {});
    return await executeRun({ scenario, options, config: loadConfig({}), target: referenceTarget(server), stop: new StopToken(), log: () => {} });
  } finally {
    await server.close();
  }
}

const findingsOf = (o: RunOutcome) => o.summary.findings.map((f) => `${f.level} ${f.clause} ${f.message}`);

describe('rate-limit scenario', () => {
  it.concurrent('the conformant reference: 429s with error bodies and consistent hints, honoured retry, recovery, second key unaffected', async () => {
    const out = await run('rate-limit', {}, FAST_RAMP);
    const d = out.summary.details as Record<string, any>;
    expect(findingsOf(out).filter((f) => !f.startsWith('INFO'))).toEqual([]);
    expect(out.exitCode).toBe(0);
    expect([10, 20]).toContain(d.first_429_offered_rps);
    expect(d.burst_rps).toBe(d.first_429_offered_rps * 2);
    expect(out.summary.status_codes['429']).toBeGreaterThan(5);
    expect(out.summary.error_answers).toMatchObject({ improper: 0 });
    expect(d.retry_headers.responses_429).toBeGreaterThan(5);
    expect(d.retry_headers).toMatchObject({ with_no_hint: 0, with_retry_after: d.retry_headers.responses_429, with_retry_after_ms: d.retry_headers.responses_429 });
    expect(d.retry_headers.advised_wait_ms.max).toBeLessThanOrEqual(1000);
    expect(d.honoured_retries[0]).toMatchObject({ ok: true, status: 200, source: 'retry-after-ms' });
    expect(d.recovery).toMatchObject({ tested: true, recovered: true });
    expect(d.recovery.recovery_ms).toBeLessThan(2500);
    expect(d.isolation).toMatchObject({ tested: true, affected: false });
    expect(d.isolation.during_throttle.sent).toBeGreaterThan(3);
    expect(findingsOf(out)).toContainEqual(expect.stringMatching(/^INFO LIM-4 API_KEY was unaffected while RATE_LIMIT_API_KEY was throttled/));
    expect(out.summary.metrics.max_ok_rps).toBeGreaterThanOrEqual(5);
    expect(out.summary.metrics.share_429).toBeGreaterThan(0);
  });

  it.concurrent('ratelimit-429-no-body: every 429 without an error body is a LIM-1 failure (exit 1)', async () => {
    const out = await run('rate-limit', { defect: 'ratelimit-429-no-body' }, FAST_RAMP);
    const f = out.summary.findings.find((x) => x.clause === 'LIM-1');
    expect(f).toMatchObject({ level: 'MUST', message: expect.stringMatching(/^429 without a proper error body: Content-Type is missing/) });
    // The recovery probes' 429s are checked too.
    expect(f!.count).toBeGreaterThanOrEqual(out.summary.status_codes['429']!);
    expect(out.summary.error_answers.improper).toBe(out.summary.status_codes['429']);
    expect(out.exitCode).toBe(1);
  });

  it.concurrent('ratelimit-no-retry-after: LIM-2 warning, and the retry falls back to a backoff', async () => {
    const out = await run('rate-limit', { defect: 'ratelimit-no-retry-after' }, FAST_RAMP);
    expect(findingsOf(out)).toContainEqual('SHOULD LIM-2 429 without Retry-After, retry-after-ms or x-ratelimit-reset-* headers');
    const d = out.summary.details as Record<string, any>;
    expect(d.retry_headers.with_no_hint).toBe(d.retry_headers.responses_429);
    expect(d.honoured_retries[0]?.source).toMatch(/no hint/);
    expect(out.exitCode).toBe(0);
  });

  it.concurrent('ratelimit-never-recovers: LIM-3, not served again and the honoured retry fails', async () => {
    const out = await run('rate-limit', { defect: 'ratelimit-never-recovers' }, FAST_RAMP);
    const d = out.summary.details as Record<string, any>;
    expect(d.recovery).toMatchObject({ tested: true, recovered: false });
    expect(findingsOf(out)).toContainEqual('SHOULD LIM-3 RATE_LIMIT_API_KEY was not served again within 3 s after the burst');
    expect(findingsOf(out)).toContainEqual(expect.stringMatching(/^SHOULD LIM-3 a client that waited the advised \d+ ms \(retry-after-ms\) still got 429 on its retry/));
  });

  it.concurrent('ratelimit-drops-connection and ratelimit-as-500: refused without a 429 (LIM-1, ERR-2)', async () => {
    const [drops, as500] = await Promise.all([
      run('rate-limit', { defect: 'ratelimit-drops-connection' }, FAST_RAMP),
      run('rate-limit', { defect: 'ratelimit-as-500' }, FAST_RAMP),
    ]);
    expect(drops.summary.failures.dropped).toBeGreaterThan(0);
    expect(findingsOf(drops)).toContainEqual('MUST LIM-1 connection dropped without a response under load');
    expect(findingsOf(drops)).toContainEqual(expect.stringMatching(/^MUST LIM-1 past its limit \(from \d+ req\/s\) RATE_LIMIT_API_KEY was refused without a 429: .*dropped connections/));
    expect(drops.exitCode).toBe(1);
    expect(as500.summary.status_codes['500']).toBeGreaterThan(0);
    expect(findingsOf(as500)).toContainEqual('MUST ERR-2 answered 500 (a 5xx other than 503) under load');
    expect(as500.summary.metrics.share_5xx_other).toBeGreaterThan(0);
    expect(as500.exitCode).toBe(1);
  });
});

describe('overload under stream load', () => {
  const flags = ['--concurrency', '12', '--duration', '1.5', '--ramp-up', '0'];
  it.concurrent('the conformant reference sheds with 503 and an error body: no finding', async () => {
    const out = await run('stream', { overloadInFlight: 4, latency: { ttftMs: 100, itlMs: 20 } }, flags);
    expect(out.summary.status_codes['503']).toBeGreaterThan(0);
    expect(out.summary.metrics.share_503).toBeGreaterThan(0);
    expect(out.summary.findings).toEqual([]);
    expect(out.exitCode).toBe(0);
  });

  it.concurrent('overload-500: 500s are an ERR-2 failure', async () => {
    const out = await run('stream', { defect: 'overload-500' }, flags);
    expect(out.summary.status_codes['500']).toBeGreaterThan(0);
    expect(findingsOf(out)).toContainEqual('MUST ERR-2 answered 500 (a 5xx other than 503) under load');
    expect(out.exitCode).toBe(1);
  });

  it.concurrent('overload-503-no-body: 503 without an error body is an ERR-4 failure', async () => {
    const out = await run('stream', { defect: 'overload-503-no-body' }, flags);
    expect(out.summary.status_codes['503']).toBeGreaterThan(0);
    expect(findingsOf(out)).toContainEqual(expect.stringMatching(/^MUST ERR-4 503 without a proper error body: Content-Type is missing/));
    expect(out.exitCode).toBe(1);
  });
});
