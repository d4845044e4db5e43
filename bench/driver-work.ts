// Bench helper: the stream driver's own work per SSE event, without sockets. The
// responder's exact bytes (bench/stream-bytes.ts, one network piece per event as
// bench/stream-responder.ts writes them) are fed to the driver's request handler (load/engine/lean-client.ts:
// SSE reading, JSON parsing, checks, timestamps, the gap tally) and each finished
// stream to the recorder (histograms), in this process, and the CPU time is divided by
// the events. It is the part of the driver's cost that is the driver's own (the rest,
// sockets, HTTP parsing and the kernel, is the floor's too), measured without the
// network's noise; the same bytes through the strict reader alone (lib/http/sse-reader.ts,
// as the driver read every stream before load/engine/sse-scan.ts) are measured beside it.
import type { Dispatcher } from 'undici';
import { SseReader } from '../lib/http/sse-reader.ts';
import { validate } from '../lib/spec/schema-validator.ts';
import { Findings } from '../load/report/findings.ts';
import { LeanCall, type Outcome } from '../load/engine/lean-client.ts';
import { Recorder } from '../load/engine/recorder.ts';
import { SseScan } from '../load/engine/sse-scan.ts';
import { ChunkParser } from '../load/engine/chunk-parser.ts';
import { streamPieces } from './stream-bytes.ts';

const controller = { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null } as unknown as Dispatcher.DispatchController;
const headers = { 'content-type': 'text/event-stream' };

export interface DriverWork {
  /** LeanCall + recorder per event (µs of CPU, user + system). */
  driver_us_per_event: number;
  /** The strict reader alone plus JSON.parse of every payload (the driver's reading before the fast path). */
  strict_reader_us_per_event: number;
  /** The fast path alone plus JSON.parse of every payload. */
  fast_path_us_per_event: number;
  /** The fast path plus the driver's chunk parser (load/engine/chunk-parser.ts): the driver's reading as it is. */
  fast_path_chunk_parser_us_per_event: number;
  /**
   * The same LeanCall work with its caches turned over: before each event a random walk
   * over a large buffer evicts much of what the event last touched, as undici, Node and the
   * kernel do between two events of one stream live. Only the driver's calls are timed
   * (wall time); how much the walk evicts is a choice, so this shows the sensitivity.
   */
  driver_evicted_us_per_event: number;
  events: number;
}

/** Random cache lines of a 256 MiB buffer the walk reads before each event (1.25 MiB): much of L1, L2 (2 MiB a core here) and the TLB turned over. */
const COLD_LINES = 20_000;
const COLD_STREAMS = 50;

/** One stream per LeanCall, events fed in turns across the streams: only the driver's own calls timed, caches evicted before each. */
function coldDriverWork(pieces: Buffer[]): number {
  const big = new Uint8Array(256 * 1024 * 1024);
  for (let i = 0; i < big.length; i += 4096) big[i] = 1; // the pages exist before the walk (no page faults in it)
  let seed = 12345;
  let sink = 0;
  const evict = () => {
    for (let i = 0; i < COLD_LINES; i++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      sink += big[(seed % (big.length >>> 6)) << 6]!;
    }
  };
  const recorder = new Recorder(true, new Findings());
  const calls: LeanCall[] = [];
  for (let s = 0; s < COLD_STREAMS; s++) {
    const call = new LeanCall({ seq: s, route: 'chat', key: 'main', stream: true, path: '/', body: '', headers: {}, intendedAt: performance.now(), sample: s % 20 === 0 }, (o: Outcome) => recorder.recordOutcome(o));
    call.onRequestStart(controller);
    call.onResponseStart(controller, 200, headers);
    calls.push(call);
  }
  let inside = 0;
  let events = 0;
  for (const p of pieces) {
    for (const call of calls) {
      evict();
      const t0 = performance.now();
      call.onResponseData(controller, p);
      inside += performance.now() - t0;
      events++;
    }
  }
  for (const call of calls) {
    evict();
    const t0 = performance.now();
    call.onResponseEnd();
    inside += performance.now() - t0;
  }
  if (recorder.ok !== COLD_STREAMS || sink < 0) throw new Error(`driver work: ${COLD_STREAMS - recorder.ok} synthetic streams failed`);
  return (inside * 1000) / events;
}

function cpuUs(f: () => number): { us: number; events: number } {
  const c0 = process.cpuUsage();
  const events = f();
  const c = process.cpuUsage(c0);
  return { us: c.user + c.system, events };
}

export function measureDriverWork(streams = 20_000, tokens = 40): DriverWork {
  const pieces = streamPieces(tokens);
  const eventsPerStream = tokens + 3;
  validate('chat-completion-chunk', {}); // compile the schema outside the measurement
  const viaDriver = (n: number) => {
    const recorder = new Recorder(true, new Findings());
    for (let s = 0; s < n; s++) {
      // Every 20th stream is schema-checked, as --sample-every's default.
      const call = new LeanCall({ seq: s, route: 'chat', key: 'main', stream: true, path: '/', body: '', headers: {}, intendedAt: performance.now(), sample: s % 20 === 0 }, (o: Outcome) => recorder.recordOutcome(o));
      call.onRequestStart(controller);
      call.onResponseStart(controller, 200, headers);
      for (const p of pieces) call.onResponseData(controller, p);
      call.onResponseEnd();
    }
    if (recorder.ok !== n) throw new Error(`driver work: ${n - recorder.ok} synthetic streams failed`);
    return recorder.sseEvents;
  };
  const viaStrict = (n: number) => {
    let events = 0;
    for (let s = 0; s < n; s++) {
      const r = new SseReader({ maxProblemsPerKind: 1 });
      for (const p of pieces) for (const ev of r.push(p)) if (ev.data !== '[DONE]') { JSON.parse(ev.data); events++; } else events++;
      r.end();
    }
    return events;
  };
  const viaFast = (n: number) => {
    let events = 0;
    for (let s = 0; s < n; s++) {
      const scan = new SseScan((d) => { if (d !== '[DONE]') JSON.parse(d); events++; });
      for (const p of pieces) scan.push(p);
      scan.end();
    }
    return events;
  };
  const viaParser = (n: number) => {
    let events = 0;
    for (let s = 0; s < n; s++) {
      const chunks = new ChunkParser();
      const scan = new SseScan((d) => { if (d !== '[DONE]') chunks.parse(d); events++; });
      for (const p of pieces) scan.push(p);
      scan.end();
    }
    return events;
  };
  // Warm the JIT on each path, then measure.
  viaDriver(500);
  viaStrict(500);
  viaFast(500);
  viaParser(500);
  const driver = cpuUs(() => viaDriver(streams));
  const strict = cpuUs(() => viaStrict(streams));
  const fast = cpuUs(() => viaFast(streams));
  const parser = cpuUs(() => viaParser(streams));
  // Wall time inside the calls (the walk is not timed): the median of 3 rounds, after one to warm up.
  coldDriverWork(pieces);
  const cold = [coldDriverWork(pieces), coldDriverWork(pieces), coldDriverWork(pieces)].sort((a, b) => a - b)[1]!;
  if (driver.events !== streams * eventsPerStream) throw new Error(`driver work: ${driver.events} events, expected ${streams * eventsPerStream}`);
  return {
    driver_us_per_event: driver.us / driver.events,
    strict_reader_us_per_event: strict.us / strict.events,
    fast_path_us_per_event: fast.us / fast.events,
    fast_path_chunk_parser_us_per_event: parser.us / parser.events,
    driver_evicted_us_per_event: cold,
    events: driver.events,
  };
}
