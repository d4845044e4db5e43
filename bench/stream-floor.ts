// Bench child: the floor for the stream driver. The least a Node load generator on
// undici can do and still measure streams: the same pool, the same requests, the same
// closed loop of N concurrent streams with the same ramp-up as `npm run load -- stream
// --concurrency N`, and per response only this: find each event boundary in the raw
// bytes (a blank line: LF LF, or CRLF CRLF) and take performance.now() for it. No
// decoding, no parsing, no checks, no histograms. The driver's CPU per event divided
// by this one's is the price of everything the driver does on top (bench/run.ts).
//
// With `socket` as the fifth argument it is the floor below undici, for reference: the
// same loop on plain node:net sockets, the request written by hand and the response's
// bytes only scanned (no HTTP parsing at all: it knows bench/stream-responder.ts's
// response ends with the chunked terminator in its last write). What it costs is what
// the kernel and Node's socket reads cost per event on this machine, which no Node
// client can go below; its system time alone is reported apart.
//
// With a sixth argument, every request's prompt is that many words (about as many tokens:
// one fixed text, built once), for the bench's long-prompt shape.
//
// Usage: node --import tsx bench/stream-floor.ts <base-url ending in /v1> <n> <seconds> <ramp-up seconds> [undici|socket] [prompt words]
// Prints one JSON line: { events, streams, failed, cpu_user_s, cpu_system_s, wall_s, max_rss_mib }.
import net from 'node:net';
import type { Dispatcher } from 'undici';
import { createPool } from '../load/engine/load-driver.ts';
import { bodyFor } from '../load/engine/request-bodies.ts';

const [base = '', nArg = '100', secsArg = '5', rampArg = '2', kind = 'undici', promptArg] = process.argv.slice(2);
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

/** Counts the event boundaries (blank lines) in each network piece and timestamps them. */
class Boundaries {
  /** The previous piece ended with LF (a boundary may straddle two pieces). */
  private lastLf = false;
  private lastCrLf = false;
  /** CRLF CRLF counts too (SSE allows it); not on raw sockets, where it is HTTP's framing. */
  constructor(private readonly crlf = true) {}
  scan(chunk: Buffer): void {
    const now = performance.now();
    let at = 0;
    if (this.lastLf && chunk[0] === LF) { events++; lastEventAt = now; at = 1; }
    else if (this.crlf && this.lastCrLf && chunk[0] === 0x0d && chunk[1] === LF) { events++; lastEventAt = now; at = 2; }
    for (;;) {
      const i = chunk.indexOf(LF, at);
      if (i === -1) break;
      at = i + 1;
      if (chunk[at] === LF) { events++; lastEventAt = now; at++; }
      else if (this.crlf && chunk[at] === 0x0d && chunk[at + 1] === LF && chunk[i - 1] === 0x0d) { events++; lastEventAt = now; at += 2; }
    }
    const len = chunk.length;
    this.lastLf = len > 0 && chunk[len - 1] === LF;
    this.lastCrLf = len > 1 && this.lastLf && chunk[len - 2] === 0x0d;
  }
}

class FloorCall extends Boundaries implements Dispatcher.DispatchHandler {
  onRequestStart(): void {}
  onResponseStart(): void {}
  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.scan(chunk);
  }
  constructor(private readonly then?: () => void) {
    super();
  }
  onResponseEnd(): void { this.done(true); }
  onResponseError(): void { this.done(false); }
  private done(ok: boolean): void {
    ended(ok, this.then);
  }
}

/** A stream ended: a warm-up one calls its `then`; a measured one's worker sends the next. */
function ended(ok: boolean, then?: () => void): void {
  if (then) return then();
  inFlight--;
  if (ok) streams++;
  else failed++;
  if (sending && ok) setImmediate(send); // a failed worker stops (the bench reports any failure)
  else if (inFlight === 0) void finish();
}

const pool = createPool(url.origin, Math.max(n, 1), 60_000);
let seq = 0;
const prompt = promptArg ? 'Write one short sentence about load testing.' + ' load'.repeat(Number(promptArg)) : 'Write one short sentence about load testing.';
const nextBody = () => JSON.stringify(bodyFor('chat', { model: 'svc-auto', prompt, stream: true }, seq++));
function send(then?: () => void): void {
  if (!then) inFlight++;
  if (kind === 'socket') return socketSend(then);
  pool.dispatch({ path, method: 'POST', headers, body: nextBody() }, new FloorCall(then));
}

// The socket floor's connections: idle ones on a stack, as the pool keeps them.
const idleSockets: Array<{ socket: net.Socket; reader: SocketStream }> = [];
const allSockets = new Set<net.Socket>();
const END = Buffer.from('\r\n0\r\n\r\n');
class SocketStream extends Boundaries {
  constructor() {
    super(false);
  }
  /** The last bytes seen, to find the chunked terminator across two pieces. */
  private tail: Buffer = Buffer.alloc(0);
  then?: () => void;
  active = false;
  onPiece(piece: Buffer, release: () => void): void {
    this.scan(piece);
    const n = END.length;
    const seen = piece.length >= n ? piece.subarray(piece.length - n) : Buffer.concat([this.tail, piece]).subarray(-n);
    this.tail = seen;
    if (this.active && seen.equals(END)) {
      this.active = false;
      this.tail = Buffer.alloc(0);
      release();
      ended(true, this.then);
    }
  }
}
function socketSend(then?: () => void): void {
  const body = nextBody();
  const request = `POST ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  let conn = idleSockets.pop();
  while (conn?.socket.destroyed) conn = idleSockets.pop(); // closed while idle: not reused
  if (!conn) {
    const socket = net.connect(Number(url.port), url.hostname);
    socket.setNoDelay(true);
    const reader = new SocketStream();
    const c = { socket, reader };
    allSockets.add(socket);
    socket.on('data', (piece: Buffer) => reader.onPiece(piece, () => idleSockets.push(c)));
    socket.on('error', () => {});
    socket.on('close', () => {
      allSockets.delete(socket);
      if (reader.active) { reader.active = false; ended(false, reader.then); }
    });
    conn = c;
  }
  conn.reader.then = then;
  conn.reader.active = true;
  conn.socket.write(request);
}

let cpu0 = process.cpuUsage();
let t0 = performance.now();
async function finish(): Promise<void> {
  // Closing the pool is in the window, as it is in the driver's (load/run.ts closes its pool before CpuMeter stops).
  await pool.destroy().catch(() => {});
  for (const socket of allSockets) socket.destroy();
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
