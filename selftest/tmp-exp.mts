import { startReferenceServer } from '../reference/server.ts';
import { HttpClient } from '../lib/http/http-client.ts';
const ref = await startReferenceServer({ port: 0 });
const http = new HttpClient({ baseUrl: ref.url, timeoutMs: 20000 });
const auth = { key: ref.keys.main };
const body = (n: number) => ({ model: 'svc', messages: [{ role: 'user', content: 'x'.repeat(n) }] });
for (const [what, spec] of [
  ['chunked small', { json: body(10), chunked: true }],
  ['256k', { json: body(256 * 1024) }],
  ['16M', { json: body(16 * 1024 * 1024) }],
  ['16M chunked', { json: body(16 * 1024 * 1024), chunked: true }],
  ['after', { json: body(10) }],
] as const) {
  const t0 = Date.now();
  const ex = await http.send({ method: 'POST', path: '/chat/completions', auth, ...spec });
  console.log(what, ex.status, ex.error?.message, (ex.text ?? '').slice(0, 100), Date.now() - t0, 'ms', ex.curl.slice(0, 60));
}
await http.close(); await ref.close();
