// Bench child: the floor for the stream driver. The least a Node load generator on
// undici can do and still measure streams: the same pool, the same requests, the same
// closed loop of N concurrent streams with the same ramp-up as `npm run load -- stream
// --concurrency N`, and per response only this: find each event boundary in the raw
// bytes (a blank line: LF LF, or CRLF CRLF) and take performance.now() for it. No
// decoding, no parsing, no checks, no histograms. The driver's CPU per event divided
// by this one's is the price of everything the driver does on top (bench/run.ts).
//
// Usage: node --import tsx bench/stream-floor.ts <base-url ending in /v1> <n> <seconds> <ramp-up seconds>
// Prints one JSON line: { events, streams, failed, cpu_user_s, cpu_system_s, wall_s, max_rss_mib }.
import type { Dispatcher } from 'undici';
import { createPool } from '../load/driver.ts';
import { bodyFor } from '../load/request-bodies.ts';

const [base = '', nArg = '100', secsArg = '5', rampArg = '2'] = process.argv.slice(2);
const url = new URL(base);
const n = Number(nArg);
const durationMs = Number(secsArg) * 1000;
const rampUpMs = Number(rampArg) * 1000;
const path = url.pathname.replace(/\/$/, '') + '/chat/completions';
const headers = { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${process.env.API_KEY ?? ''}`, 'user-agent': 'chatgate-floor' };
const LF = 0x0a;

let events = 0;
let streams = 0;
let failed = 0;
let inFlight = 0;
let sending = true;
/** Timestamps are taken (that is the floor's job) and kept in one slot, so the work is not optimised away. */
let lastEventAt = 0;

class FloorCall implements Dispatcher.DispatchHandler {
  /** The previous piece ended with LF (a boundary may straddle two pieces). */
  private lastLf = false;
  private lastCrLf = false;
  onRequestStart(): void {}
  onResponseStart(): void {}
  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    const now = performance.now();
    let at = 0;
    if (this.lastLf && chunk[0] === LF) { events++; lastEventAt = now; at = 1; }
    else if (this.lastCrLf && chunk[0] === 0x0d && chunk[1] === LF) { events++; lastEventAt = now; at = 2; }
    for (;;) {
      const i = chunk.indexOf(LF, at);
      if (i === -1) break;
      at = i + 1;
      if (chunk[at] === LF) { events++; lastEventAt = now; at++; }
      else if (chunk[at] === 0x0d && chunk[at + 1] === LF && chunk[i - 1] === 0x0d) { events++; lastEventAt = now; at += 2; }
    }
    const len = chunk.length;
    this.lastLf = len > 0 && chunk[len - 1] === LF;
    this.lastCrLf = len > 1 && this.lastLf && chunk[len - 2] === 0x0d;
  }
  constructor(private readonly then?: () => void) {}
  onResponseEnd(): void { this.done(true); }
  onResponseError(): void { this.done(false); }
  private done(ok: boolean): void {
    if (this.then) return this.then();
    inFlight--;
    if (ok) streams++;
    else failed++;
    if (sending && ok) setImmediate(send); // a failed worker stops (the bench reports any failure)
    else if (inFlight === 0) void finish();
  }
}

const pool = createPool(url.origin, Math.max(n, 1), 60_000);
let seq = 0;
function send(then?: () => void): void {
  if (!then) inFlight++;
  const body = JSON.stringify(bodyFor('chat', { model: 'svc-auto', prompt: 'Write one short sentence about load testing.', stream: true }, seq++));
  pool.dispatch({ path, method: 'POST', headers, body }, new FloorCall(then));
}

let cpu0 = process.cpuUsage();
let t0 = performance.now();
async function finish(): Promise<void> {
  // Closing the pool is in the window, as it is in the driver's (load/run.ts closes its pool before CpuMeter stops).
  await pool.destroy().catch(() => {});
  const cpu = process.cpuUsage(cpu0);
  const out = {
    events, streams, failed,
    cpu_user_s: cpu.user / 1e6, cpu_system_s: cpu.system / 1e6,
    wall_s: (performance.now() - t0) / 1000,
    max_rss_mib: Math.round(process.resourceUsage().maxRSS / 1024),
    last_event_at: lastEventAt > 0,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  process.exit(0);
}

// Same ramp-up as the driver's closed loop: stream i starts at i * rampUp / n.
let started = 0;
function measure(): void {
  events = 0;
  cpu0 = process.cpuUsage();
  t0 = performance.now();
  startDue();
  setTimeout(() => { sending = false; if (inFlight === 0) void finish(); }, durationMs);
}
const startDue = (): void => {
  const now = performance.now();
  while (started < n && sending && t0 + (n <= 1 ? 0 : (started * rampUpMs) / n) <= now) {
    started++;
    send();
  }
  if (started < n && sending) setTimeout(startDue, 1);
};
// Warm-up as the driver's (5 streams, not measured): JIT and the first connections.
let warm = 0;
for (let i = 0; i < 5; i++) send(() => { if (++warm === 5) setImmediate(measure); });
