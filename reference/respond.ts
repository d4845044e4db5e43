// Writes complete (non-stream) responses. Every body goes through here so that the
// wire-level variants (charset, gzip, chunked, connection-close) and the header
// defects apply to all of them in one place.
import { gzipSync } from 'node:zlib';
import type { RequestContext } from './request-context.ts';

/** Headers every response of this request carries, streams included. */
export function baseHeaders(ctx: RequestContext): Record<string, string> {
  const h: Record<string, string> = { ...ctx.extraHeaders };
  if (ctx.variant('connection-close')) h['Connection'] = 'close';
  if (ctx.defect('key-echoed-in-header') || (ctx.defect('key-echoed-to-clients') && ctx.fromClientLibrary())) {
    h['x-debug-key'] = ctx.key?.value ?? ctx.presentedCredential() ?? ctx.state.keys.main.value;
  }
  return h;
}

export function contentType(ctx: RequestContext, mime: string): string {
  return ctx.variant('charset') ? `${mime}; charset=utf-8` : mime;
}

/** Resolves once the response is fully handed to the socket (or the socket is gone). */
function finished(ctx: RequestContext): Promise<void> {
  const { res } = ctx;
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    res.once('finish', () => resolve());
    res.once('close', () => resolve());
  });
}

export async function sendBody(
  ctx: RequestContext,
  status: number,
  mime: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
): Promise<void> {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return;
  let payload = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const h: Record<string, string> = { ...baseHeaders(ctx), 'Content-Type': contentType(ctx, mime), ...headers };
  const isJson = mime === 'application/json';
  if (isJson && ctx.variant('gzip') && ctx.acceptsGzip()) {
    payload = gzipSync(payload);
    h['Content-Encoding'] = 'gzip';
    h['Vary'] = 'Accept-Encoding';
  }
  if (isJson && ctx.variant('chunked') && payload.length > 0) {
    // No Content-Length: node frames each write as one HTTP chunk.
    res.writeHead(status, h);
    const cut1 = Math.max(1, Math.floor(payload.length / 3));
    const cut2 = Math.max(cut1, Math.floor((payload.length * 2) / 3));
    for (const piece of [payload.subarray(0, cut1), payload.subarray(cut1, cut2), payload.subarray(cut2)]) {
      if (piece.length) res.write(piece);
    }
    res.end();
    return finished(ctx);
  }
  h['Content-Length'] = String(payload.length);
  res.writeHead(status, h);
  res.end(payload);
  return finished(ctx);
}

export function sendJson(ctx: RequestContext, status: number, value: unknown, headers: Record<string, string> = {}): Promise<void> {
  return sendBody(ctx, status, 'application/json', JSON.stringify(value), headers);
}

/** A response with no body at all (204, or the empty-body defects). */
export function sendEmpty(ctx: RequestContext, status: number, headers: Record<string, string> = {}): Promise<void> {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return Promise.resolve();
  res.writeHead(status, { ...baseHeaders(ctx), ...headers, ...(status === 204 ? {} : { 'Content-Length': '0' }) });
  res.end();
  return finished(ctx);
}
