// Bench child: a minimal SSE chat-completions responder with exact pacing: the first
// content chunk (with the role) at TTFT_MS after the request, then one content chunk
// every ITL_MS, TOKENS in all, then the finish chunk, the usage chunk and [DONE]
// (bench/stream-bytes.ts). The schedule is drift-free (each write is due at
// start + ttft + k * itl), so what the driver measures against TTFT_MS/ITL_MS is the
// driver's own error, provided the responder keeps its schedule: it measures how late
// each write left and answers {type:'late'} with that (bench/run.ts prints it beside
// every step and does not count a step whose truth was not delivered).
//
// Why not node:http: at 10,000 streams (50,000 events and 4,500 requests a second)
// node:http with a timer per write took this process's whole core and sent writes
// 20 to 64 ms late (measured), so the bench measured the responder. This one speaks
// just the HTTP/1.1 its clients send (the load driver and the floors of
// bench/stream-floor.ts: a request with a Content-Length body, keep-alive, no
// pipelining), with pre-framed chunked-encoding pieces and one 1 ms timer wheel for
// every stream. A request it does not understand gets a 400 and the connection is
// closed.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { serveChild } from '../load/setup/ts-child.ts';
import { streamEvents } from './stream-bytes.ts';

const TTFT_MS = Number(process.env.TTFT_MS ?? 200);
const ITL_MS = Number(process.env.ITL_MS ?? 50);
const TOKENS = Math.max(1, Number(process.env.TOKENS ?? 40));

const frame = (text: string): Buffer => {
  const body = Buffer.from(text);
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n')]);
};
const { first, next, tail } = streamEvents(TOKENS);
const HEAD = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n');
const FIRST = frame(first);
const NEXT = frame(next);
// The last content chunk, the tail and the chunked-encoding end leave in one write.
const LAST = Buffer.concat([TOKENS === 1 ? FIRST : NEXT, frame(tail), Buffer.from('0\r\n\r\n')]);
const BAD = Buffer.from('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');

interface Conn {
  socket: net.Socket;
  /** Request bytes not yet consumed. */
  pending: Buffer | undefined;
  streaming: boolean;
  start: number;
  sent: number;
}

// Lateness of every write (ms past its due time), in 0.1 ms buckets up to 2 s: a
// bounded tally the bench reads and resets with {type:'late'}.
const LATE_BUCKETS = 20_000;
let late = new Uint32Array(LATE_BUCKETS + 1);
let lateMax = 0;
let writes = 0;
function recordLate(ms: number): void {
  const i = Math.min(LATE_BUCKETS, Math.max(0, Math.floor(ms * 10)));
  late[i]!++;
  writes++;
  if (ms > lateMax) lateMax = ms;
}
function lateQuantile(q: number): number {
  const target = Math.ceil(writes * q);
  let seen = 0;
  for (let i = 0; i <= LATE_BUCKETS; i++) {
    seen += late[i]!;
    if (seen >= target && seen > 0) return (i + 1) / 10; // upper edge of the bucket
  }
  return 0;
}

// The timer wheel: streams due in the same millisecond share a slot; one 1 ms
// interval sends every slot that is due. A write is never early, and late by at most
// the interval's own jitter plus the work of the writes before it in the tick.
const wheel = new Map<number, Conn[]>();
let lastSlot = Math.floor(performance.now());
function schedule(c: Conn, due: number): void {
  const slot = Math.ceil(due);
  let bucket = wheel.get(slot);
  if (!bucket) wheel.set(slot, (bucket = []));
  bucket.push(c);
}
const ticker = setInterval(() => {
  const nowSlot = Math.floor(performance.now());
  for (let slot = lastSlot + 1; slot <= nowSlot; slot++) {
    const bucket = wheel.get(slot);
    if (!bucket) continue;
    wheel.delete(slot);
    for (const c of bucket) step(c);
  }
  lastSlot = nowSlot;
}, 1);

let active = 0;
function step(c: Conn): void {
  if (!c.streaming || c.socket.destroyed) return;
  const due = c.start + TTFT_MS + c.sent * ITL_MS;
  recordLate(performance.now() - due);
  c.sent++;
  if (c.sent < TOKENS) {
    c.socket.write(c.sent === 1 ? FIRST : NEXT);
    schedule(c, c.start + TTFT_MS + c.sent * ITL_MS);
    return;
  }
  c.socket.write(LAST);
  c.streaming = false;
  active--;
  serveNext(c); // a request that arrived early waits its turn (HTTP/1.1 answers in order)
}

/** Parses one request off `pending` if it is all there, and starts its stream. */
function serveNext(c: Conn): void {
  const buf = c.pending;
  if (c.streaming || !buf) return;
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd === -1) {
    if (buf.length > 65_536) reject(c);
    return;
  }
  const head = buf.toString('latin1', 0, headEnd);
  if (!/^[A-Z]+ \S+ HTTP\/1\.1\r\n/.test(head) || /\r\ntransfer-encoding:/i.test(head)) return reject(c);
  const m = /\r\ncontent-length:[ \t]*(\d+)[ \t]*(?:\r\n|$)/i.exec(head);
  const length = m ? Number(m[1]) : 0;
  const end = headEnd + 4 + length;
  if (buf.length < end) return;
  c.pending = buf.length > end ? buf.subarray(end) : undefined;
  c.streaming = true;
  c.sent = 0;
  c.start = performance.now();
  active++;
  c.socket.write(HEAD);
  schedule(c, c.start + TTFT_MS);
}

function reject(c: Conn): void {
  c.pending = undefined;
  c.socket.end(BAD);
}

const sockets = new Set<net.Socket>();
const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  sockets.add(socket);
  const c: Conn = { socket, pending: undefined, streaming: false, start: 0, sent: 0 };
  socket.on('data', (piece: Buffer) => {
    c.pending = c.pending ? Buffer.concat([c.pending, piece]) : piece;
    serveNext(c);
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    sockets.delete(socket);
    if (c.streaming) active--;
    c.streaming = false;
  });
});
server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
  serveChild(() => new Promise((r) => {
    clearInterval(ticker);
    for (const s of sockets) s.destroy();
    server.close(() => r());
  }));
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port, pid: process.pid });
});
process.on('message', (m) => {
  const type = (m as { type?: string }).type;
  if (type === 'active') process.send!({ type: 'active', active });
  if (type === 'late') {
    process.send!({ type: 'late', writes, p50_ms: lateQuantile(0.5), p99_ms: lateQuantile(0.99), max_ms: Math.round(lateMax * 10) / 10 });
    late = new Uint32Array(LATE_BUCKETS + 1);
    lateMax = 0;
    writes = 0;
  }
});
