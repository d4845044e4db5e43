// Bench child: a minimal SSE chat-completions responder with exact pacing: the first
// content chunk (with the role) at TTFT_MS after the request, then one content chunk
// every ITL_MS, TOKENS in all, then the finish chunk, the usage chunk and [DONE].
// Chunks are pre-serialised and the schedule is drift-free (each write is due at
// start + ttft + k * itl), so what the driver measures against TTFT_MS/ITL_MS is the
// driver's own error.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveChild } from '../load/ts-child.ts';

const TTFT_MS = Number(process.env.TTFT_MS ?? 200);
const ITL_MS = Number(process.env.ITL_MS ?? 50);
const TOKENS = Number(process.env.TOKENS ?? 40);

const chunk = (delta: Record<string, unknown>, finish: string | null, usage: unknown = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'svc-auto', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage })}\n\n`;
const first = chunk({ role: 'assistant', content: 'Token' }, null);
const next = chunk({ content: ' token' }, null);
const tail = chunk({}, 'stop')
  + `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'svc-auto', choices: [], usage: { prompt_tokens: 9, completion_tokens: TOKENS, total_tokens: 9 + TOKENS } })}\n\n`
  + 'data: [DONE]\n\n';

let active = 0;
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const start = performance.now();
    active++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    const step = () => {
      if (res.destroyed) return;
      res.write(sent === 0 ? first : next);
      sent++;
      if (sent === TOKENS) {
        res.end(tail);
        return;
      }
      timer = setTimeout(step, Math.max(0, start + TTFT_MS + sent * ITL_MS - performance.now()));
    };
    timer = setTimeout(step, TTFT_MS);
    res.once('close', () => {
      active--;
      clearTimeout(timer);
    });
  });
});
server.keepAliveTimeout = 60_000;
server.on('connection', (s) => s.setNoDelay(true));
server.listen({ port: 0, host: '127.0.0.1', backlog: 8192 }, () => {
  serveChild(() => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }));
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port, pid: process.pid });
});
process.on('message', (m) => {
  if ((m as { type?: string }).type === 'active') process.send!({ type: 'active', active });
});
