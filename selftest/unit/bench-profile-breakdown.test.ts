// The bench's profile breakdown (bench/profile-breakdown.ts) puts each busy sample of a
// driver's CPU profile in the category its stack says: a synthetic profile, counted.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { profileBreakdown } from '../../bench/profile-breakdown.ts';

const dir = mkdtempSync(join(tmpdir(), 'chatgate-profile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const F = (functionName: string, url: string) => ({ functionName, url });
const LEAN = 'file:///x/load/engine/lean-client.ts';
const UNDICI = 'file:///x/node_modules/undici/lib/dispatcher/client-h1.js';

describe('bench profile breakdown', () => {
  it('per-event, per-request, GC, start-up and undici samples each land in their category; idle is left out', () => {
    // id: [frame, parent]
    const tree: Array<[number, ReturnType<typeof F>, number | undefined]> = [
      [1, F('(root)', ''), undefined],
      [2, F('(idle)', ''), 1],
      [3, F('(garbage collector)', ''), 1],
      [4, F('onBody', UNDICI), 1],
      [5, F('onResponseData', LEAN), 4],
      [6, F('onEvent', LEAN), 5],
      [7, F('push', 'file:///x/lib/spec/cumulative-deltas.ts'), 6],
      [8, F('onResponseEnd', LEAN), 4],
      [9, F('recordOutcome', 'file:///x/load/engine/recorder.ts'), 8],
      [10, F('compileSourceTextModule', 'node:internal/modules/esm/utils'), 1],
      [11, F('writeH1', UNDICI), 1],
      [12, F('slice', 'node:buffer'), 6],
      [13, F('fail', LEAN), 6],
    ];
    const nodes = tree.map(([id, callFrame]) => ({ id, callFrame: { ...callFrame, scriptId: '0', lineNumber: 0, columnNumber: 0 }, children: tree.filter(([, , p]) => p === id).map(([c]) => c) }));
    // Samples: idle 10, GC 2, undici self 3, per-event 4 (onEvent 2, deltas 1, node:buffer under onEvent 1), per-request 3 (recorder 2, a judged bad body's fail 1), start-up 5, writeH1 1.
    const samples = [...Array(10).fill(2), 3, 3, 4, 4, 4, 6, 6, 7, 12, 9, 9, 13, 10, 10, 10, 10, 10, 11];
    const path = join(dir, 'p.cpuprofile');
    writeFileSync(path, JSON.stringify({ nodes, samples, startTime: 0, endTime: 1, timeDeltas: samples.map(() => 1) }));
    const b = profileBreakdown(path);
    expect(b.busy_samples).toBe(samples.length - 10);
    const n = (share: number) => Math.round(share * b.busy_samples);
    expect(n(b.share.garbage_collector)).toBe(2);
    expect(n(b.share.undici_node_kernel)).toBe(4);
    expect(n(b.share.per_event_driver)).toBe(4);
    expect(n(b.share.per_request_driver)).toBe(3);
    expect(n(b.share.startup_and_report)).toBe(5);
    const run = b.busy_samples - 5;
    expect(Math.round(b.run_share.per_event_driver * run)).toBe(4);
    expect(Object.values(b.run_share).reduce((a, x) => a + x, 0)).toBeCloseTo(1, 9);
  });
});
