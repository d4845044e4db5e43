// The stream bench's own pieces work together (the bench asserts nothing and CI does
// not run it, so this keeps them from rotting): the responder (bench/stream-responder.ts,
// its own small HTTP/1.1) serves the load driver, the undici floor and the socket floor,
// each stream is every event the responder sent (5 content chunks + finish, usage and
// [DONE]), nothing fails, and the responder reports how late its writes left. Judged
// by counts, never by time. Cost: about 5 s.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/run/config.ts';
import { parseArgs } from '../../load/setup/options.ts';
import { executeRun } from '../../load/run.ts';
import { StopToken } from '../../load/setup/stop.ts';
import { remoteTarget } from '../../load/setup/load-target.ts';
import { forkTs, TSX_LOADER, type TsChild } from '../../load/setup/ts-child.ts';
import { HANG_GUARD_MS } from '../support/limit.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKENS = 5;
const EVENTS_PER_STREAM = TOKENS + 3;
const KEY = 'sk-bench-selftest-0000';

let responder: TsChild<{ port: number; pid: number }>;
let base = '';
beforeAll(async () => {
  responder = await forkTs(join(ROOT, 'bench/stream-responder.ts'), { ...process.env, TTFT_MS: '20', ITL_MS: '10', TOKENS: String(TOKENS) });
  base = `http://127.0.0.1:${responder.ready.port}/v1`;
}, HANG_GUARD_MS);
afterAll(() => responder?.close());

function floor(kind: 'undici' | 'socket'): Promise<{ events: number; streams: number; failed: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'bench/stream-floor.ts'), base, '4', '1', '0', kind], { env: { ...process.env, API_KEY: KEY } }, (err, stdout) => {
      if (err) return reject(err);
      resolve(JSON.parse(stdout.trim().split('\n').pop()!));
    });
  });
}

describe('stream bench', () => {
  for (const kind of ['undici', 'socket'] as const) {
    it(`the ${kind} floor reads every event of every stream`, async () => {
      const r = await floor(kind);
      expect(r.failed).toBe(0);
      expect(r.streams).toBeGreaterThan(0);
      // Streams still open when the window closed count their events so far, so at least this many.
      expect(r.events).toBeGreaterThanOrEqual(r.streams * EVENTS_PER_STREAM);
      expect(r.events).toBeLessThan((r.streams + 4 + 1) * EVENTS_PER_STREAM);
    }, HANG_GUARD_MS);
  }

  it('the load driver judges the responder\'s streams good, and the responder reports its lateness', async () => {
    await responder.ask({ type: 'late' }, 'late');
    const config = loadConfig({ TARGET_URL: base, API_KEY: KEY });
    const { options } = parseArgs(['stream', '--quiet', '--warmup', '1', '--concurrency', '4', '--duration', '1'], {});
    const o = await executeRun({ scenario: 'stream', options, config, target: remoteTarget(config), stop: new StopToken(), log: () => {} });
    expect(o.summary.counts.failed).toBe(0);
    expect(o.summary.counts.ok).toBeGreaterThan(0);
    expect(o.summary.details.sse_events).toBeGreaterThanOrEqual(o.summary.counts.ok * EVENTS_PER_STREAM);
    expect(o.summary.output?.tokens_source).toBe('usage');
    const late = await responder.ask<{ writes: number; p50_ms: number }>({ type: 'late' }, 'late');
    expect(late.writes).toBeGreaterThanOrEqual(o.summary.counts.ok * TOKENS);
    expect(late.p50_ms).toBeGreaterThanOrEqual(0);
  }, HANG_GUARD_MS);
});
