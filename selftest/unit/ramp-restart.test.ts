// The rate-limit probe's second ramp (suites/limits.test.ts): a 429 before any stream was
// served means the budget was spent when the probe began; it waits and ramps again, so
// EV-3 has a stream to judge. No e2e run: the decision is a pure function of the answers.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { restartAfter, type RampAnswer } from '../../harness/ramp-restart.ts';

const plain = (status?: number): RampAnswer => ({ stream: false, status });
const stream = (status?: number): RampAnswer => ({ stream: true, status });

describe('the rate-limit probe ramps again when a 429 came before any stream was served', () => {
  it('restarts on the first 429 when no stream was served before it', () => {
    const first = [stream(429), plain(429), stream(429)];
    expect(restartAfter(first, 3, 200)).toBe(first[0]);
    // CI5's case: a plain 200, then a streaming 429 (the first version, which needed the first answer to be a 429, missed it).
    const ci5 = [plain(200), stream(429), plain(429)];
    expect(restartAfter(ci5, 3, 200)).toBe(ci5[1]);
    // A stream that failed (a 500, no response) was not served.
    const broken = [stream(500), stream(), plain(429)];
    expect(restartAfter(broken, 3, 200)).toBe(broken[2]);
  });

  it('does not restart once a stream was served, with no 429, or with the probe\'s budget spent', () => {
    expect(restartAfter([plain(200), stream(200), plain(429)], 3, 200)).toBeUndefined();
    expect(restartAfter([plain(200), stream(200), plain(200)], 3, 200)).toBeUndefined();
    expect(restartAfter([stream(429)], 200, 200)).toBeUndefined();
  });

  it('the probe takes its decision from this function', () => {
    const suite = readFileSync(new URL('../../suites/limits.test.ts', import.meta.url), 'utf8');
    expect(suite).toMatch(/const opening = restartAfter\(/);
  });
});
