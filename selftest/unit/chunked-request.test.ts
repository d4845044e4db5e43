// lib/http/http-client.ts `chunked`: the body goes out with Transfer-Encoding: chunked and
// no Content-Length (RFC 9112 §6.1), whole, and the curl line says so.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HttpClient } from '../../lib/http/http-client.ts';

describe('a request body sent with chunked transfer coding', () => {
  it('arrives whole, framed as chunks, without Content-Length', async () => {
    const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => { seen.push({ headers: req.headers, body: Buffer.concat(parts).toString('utf8') }); res.end('{}'); });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const http = new HttpClient({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 5000 });
    try {
      const json = { model: 'm', messages: [{ role: 'user', content: `héllo ${'x'.repeat(200_000)} 日本` }] };
      const chunked = await http.send({ method: 'POST', path: '/chat/completions', auth: 'none', json, chunked: true });
      const plain = await http.send({ method: 'POST', path: '/chat/completions', auth: 'none', json });
      expect([chunked.status, plain.status]).toEqual([200, 200]);
      expect(seen[0]!.headers['transfer-encoding']).toBe('chunked');
      expect(seen[0]!.headers['content-length']).toBeUndefined();
      expect(JSON.parse(seen[0]!.body)).toEqual(json);
      expect(seen[1]!.headers['content-length']).toBe(String(Buffer.byteLength(JSON.stringify(json))));
      expect(chunked.curl).toContain("-H 'transfer-encoding: chunked'");
    } finally {
      await http.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
