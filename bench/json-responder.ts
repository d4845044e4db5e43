// Bench child: the smallest loopback chat-completions responder (one fixed, valid
// chat completion for every request), so the bench measures the load generators,
// not a server. Started by bench/run.ts through load/setup/ts-child.ts.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveChild } from '../load/setup/ts-child.ts';

const body = Buffer.from(JSON.stringify({
  id: 'chatcmpl-bench0000000000000000', object: 'chat.completion', created: 1_700_000_000, model: 'svc-auto',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Bench reply.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 },
}));
const headers = { 'content-type': 'application/json', 'content-length': String(body.length) };

const server = http.createServer((req, res) => {
  // Answer once the request body is in (as a real server would), without parsing it.
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => {
  serveChild(() => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }));
  process.send!({ type: 'ready', port: (server.address() as AddressInfo).port, pid: process.pid });
});
