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
  events: number;
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
  if (driver.events !== streams * eventsPerStream) throw new Error(`driver work: ${driver.events} events, expected ${streams * eventsPerStream}`);
  return {
    driver_us_per_event: driver.us / driver.events,
    strict_reader_us_per_event: strict.us / strict.events,
    fast_path_us_per_event: fast.us / fast.events,
    fast_path_chunk_parser_us_per_event: parser.us / parser.events,
    events: driver.events,
  };
}
