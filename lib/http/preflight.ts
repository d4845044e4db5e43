// One cheap request before a run (GET /models with the key), on the dispatcher every
// client uses (lib/http/proxy.ts: proxies apply), to tell a target the run cannot reach at
// all from a target that answers badly. Any HTTP answer, whatever its status, means
// the run goes on (judging it is the suite's job); no HTTP answer at all is a
// configuration problem: one line naming the cause and the fix, exit 2, no report of
// a run that never happened. The conformance runner and the load harness share it.
import { request } from 'undici';
import { createDispatcher, proxyFor, type ProxyChoice } from './proxy.ts';
import { redact } from '../run/redact.ts';
import { withExtraHeaders } from './extra-headers.ts';

export interface Unreachable {
  /** The variable to fix: TARGET_URL, or the proxy variable (HTTPS_PROXY, ...). */
  variable: string;
  /** "<what happened>; <the fix>", one line, no key. */
  message: string;
  /** The error code that decided it (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...). */
  code?: string;
}

export interface PreflightResult {
  /** Status of the answer; undefined when there was none. */
  status?: number;
  /** The answer's headers and body (the first 64 KiB): the runner judges it like every exchange of the run. */
  answer?: { url: string; headers: Record<string, string>; text: string };
  unreachable?: Unreachable;
  /** The proxy the run goes through, if any. */
  proxy?: ProxyChoice;
  /** Things the user should know that do not stop the run (one line each). */
  warnings: string[];
}

export interface PreflightInput {
  targetUrl: string;
  apiKey: string;
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** Certificate chains Node cannot verify: a CA it does not trust (a private CA, a self-signed server). */
const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT',
]);

/** Throws ConfigError when a proxy variable is malformed (before any request). */
export async function preflight(input: PreflightInput): Promise<PreflightResult> {
  const env = input.env ?? process.env;
  const target = new URL(input.targetUrl);
  const proxy = proxyFor(target, env);
  const warnings: string[] = [];
  if (proxy && target.protocol === 'http:') {
    warnings.push(`TARGET_URL is http:// and goes through the proxy in ${proxy.variable} (${proxy.shown}): inside the CONNECT tunnel the request, key included, crosses the proxy in clear; use https:// through a proxy`);
  }
  const connectMs = Math.min(input.timeoutMs, 10_000);
  const dispatcher = createDispatcher(target, {
    headersTimeout: input.timeoutMs + 1_000, bodyTimeout: input.timeoutMs + 1_000,
    connect: { timeout: connectMs }, keepAliveTimeout: 1_000,
  }, env);
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), input.timeoutMs);
  try {
    const url = `${input.targetUrl.replace(/\/+$/, '')}/models`;
    const res = await request(url, {
      method: 'GET',
      // Named in the User-Agent, so a server's log (and a test fixture) can tell it from the tests' requests.
      headers: withExtraHeaders({ authorization: `Bearer ${input.apiKey}`, accept: 'application/json', 'user-agent': 'chatgate-preflight' }, env),
      dispatcher,
      signal: deadline.signal,
    });
    const text = await firstBytes(res.body, ANSWER_BYTES).catch(() => '');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    return { status: res.statusCode, answer: { url, headers, text }, proxy, warnings };
  } catch (err) {
    const unreachable = explain(err, { target, proxy, timeoutMs: input.timeoutMs, connectMs, timedOut: deadline.signal.aborted, extraCa: env.NODE_EXTRA_CA_CERTS?.trim() || undefined });
    unreachable.message = redact(unreachable.message.replace(/\s*\n\s*/g, ' '));
    return { unreachable, proxy, warnings };
  } finally {
    clearTimeout(timer);
    await dispatcher.destroy().catch(() => {});
  }
}

/** The most of its answer the preflight reads (a body this long may have been cut by us). */
export const ANSWER_BYTES = 64 * 1024;

/** The body's first `max` bytes as text; the rest is not read. */
async function firstBytes(body: AsyncIterable<Buffer> & { destroy(): unknown }, max: number): Promise<string> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const chunk of body) {
    parts.push(chunk);
    n += chunk.length;
    if (n >= max) { body.destroy(); break; }
  }
  return Buffer.concat(parts).subarray(0, max).toString('utf8');
}

/** Every error code in an error and its causes (AggregateError for multi-address connects). */
function codesOf(err: unknown, seen = new Set<unknown>()): string[] {
  if (!err || typeof err !== 'object' || seen.has(err)) return [];
  seen.add(err);
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown[] };
  const own = typeof e.code === 'string' ? [e.code] : [];
  return [...own, ...codesOf(e.cause, seen), ...(Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, seen)) : [])];
}

function messagesOf(err: unknown): string {
  const parts: string[] = [];
  for (let e = err as { message?: unknown; cause?: unknown } | undefined, i = 0; e && i < 5; e = e.cause as typeof e, i++) {
    if (typeof e.message === 'string') parts.push(e.message);
  }
  return parts.join(' / ');
}

function hostPort(u: URL): string {
  return `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`;
}

interface Context {
  target: URL; proxy?: ProxyChoice; timeoutMs: number; connectMs: number; timedOut: boolean;
  /** NODE_EXTRA_CA_CERTS as this process started with it. */
  extraCa?: string;
}

/** The cause and the fix for a request that got no HTTP answer. */
export function explain(err: unknown, ctx: Context): Unreachable {
  const { target, proxy } = ctx;
  const codes = codesOf(err);
  const text = messagesOf(err);
  const where = hostPort(target);
  const unreachable = (what: string, fix: string, code?: string): Unreachable =>
    ({ variable: 'TARGET_URL', message: `${target.origin}${target.pathname} cannot be reached: ${what}; ${fix}`, code });
  const viaProxy = (what: string, fix: string, code?: string): Unreachable =>
    ({ variable: proxy!.variable, message: `proxy ${proxy!.shown} (for ${where}): ${what}; ${fix}`, code });
  const has = (...c: string[]) => c.find((x) => codes.includes(x));

  // The proxy answered the CONNECT, but not with 2xx (undici: "Proxy response (407) !== 200 when HTTP Tunneling").
  const connectStatus = /Proxy response \((\d{3})\)/.exec(text)?.[1];
  if (proxy && connectStatus) {
    if (connectStatus === '407') {
      return viaProxy('it asks for credentials (407 Proxy Authentication Required)', `put them in the proxy URL: ${proxy.variable}=http://user:password@host:port`, '407');
    }
    return viaProxy(`it answered ${connectStatus} to CONNECT ${where} (it refuses or cannot reach the target)`, `ask for ${where} to be allowed through it, or set NO_PROXY=${target.hostname} if the target is reachable directly`, connectStatus);
  }
  if (ctx.timedOut && !has('UND_ERR_CONNECT_TIMEOUT')) {
    const through = proxy ? ` through the proxy in ${proxy.variable} (${proxy.shown})` : '';
    return unreachable(`no HTTP answer within ${ctx.timeoutMs} ms${through} (timeout)`, 'check the address and that the service is up, or raise TIMEOUT_MS for a slow target');
  }
  if (has('UND_ERR_CONNECT_TIMEOUT')) {
    if (proxy) return viaProxy(`no connection within ${ctx.connectMs} ms (timeout)`, `check the proxy address, or set NO_PROXY=${target.hostname} to go direct`, 'UND_ERR_CONNECT_TIMEOUT');
    const handshake = target.protocol === 'https:' ? ', TLS handshake included' : '';
    return unreachable(`no connection to ${where} within ${ctx.connectMs} ms${handshake} (timeout)`, 'check the address, the port and any firewall; behind a proxy set HTTPS_PROXY', 'UND_ERR_CONNECT_TIMEOUT');
  }
  // A TLS problem with the proxy's own certificate (https:// proxy URL).
  const proxyTls = has('UND_ERR_PRX_TLS');
  const untrusted = has(...UNTRUSTED);
  if (untrusted) {
    const fix = ctx.extraCa
      ? `NODE_EXTRA_CA_CERTS=${ctx.extraCa} is set but does not hold the CA that issued it (or could not be read: see Node's warning); point it at the issuing CA's certificate (PEM)`
      : 'if it is issued by a private CA, set NODE_EXTRA_CA_CERTS=/path/to/ca.pem (the CA certificate, PEM) and run again';
    if (proxy && proxyTls) return viaProxy(`TLS: the proxy's certificate is not signed by a CA Node trusts (${untrusted})`, fix, untrusted);
    return unreachable(`TLS: the certificate of ${target.hostname} is not signed by a CA Node trusts (${untrusted})`, fix, untrusted);
  }
  const expired = has('CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID');
  if (expired) {
    const what = expired === 'CERT_HAS_EXPIRED' ? 'has expired' : 'is not valid yet';
    return unreachable(`TLS: the certificate of ${target.hostname} ${what} (${expired})`, 'the server needs a renewed certificate (or this machine\'s clock is wrong)', expired);
  }
  if (has('ERR_TLS_CERT_ALTNAME_INVALID')) {
    const reason = /is not in the cert's altnames: ([^\n/]+)/.exec(text)?.[1]?.trim();
    return unreachable(`TLS: the certificate is not valid for ${target.hostname}${reason ? ` (it names ${reason})` : ''} (ERR_TLS_CERT_ALTNAME_INVALID)`, 'use a host name the certificate names in TARGET_URL, or have the certificate reissued for this one', 'ERR_TLS_CERT_ALTNAME_INVALID');
  }
  const tls = codes.find((c) => /^ERR_SSL_|^ERR_TLS_|^EPROTO$|CERT/.test(c));
  if (tls) {
    const hint = target.protocol === 'https:' ? 'is there an https server at this address? a plain-HTTP service needs http://' : 'check the TLS settings of the service';
    return unreachable(`TLS handshake with ${where} failed (${tls})`, hint, tls);
  }
  const dns = has('ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL');
  if (dns) {
    const temporary = dns === 'EAI_AGAIN';
    if (proxy) {
      const host = new URL(proxy.url).hostname;
      return viaProxy(`the proxy host ${host} ${temporary ? 'could not be looked up (DNS did not answer)' : 'is not found (DNS)'} (${dns})`, 'check the proxy address in the variable', dns);
    }
    return temporary
      ? unreachable(`the DNS lookup of ${target.hostname} got no answer (${dns})`, 'check this machine\'s DNS and network (VPN?)', dns)
      : unreachable(`host ${target.hostname} is not found (DNS ${dns})`, 'check the host name in TARGET_URL, and this machine\'s DNS or VPN', dns);
  }
  const refused = has('ECONNREFUSED');
  if (refused) {
    if (proxy) return viaProxy('it refused the connection (ECONNREFUSED)', `check the proxy address and port, or set NO_PROXY=${target.hostname} to go direct`, refused);
    return unreachable(`the connection to ${where} was refused (ECONNREFUSED)`, 'check the address and port, and that the service is up', refused);
  }
  const unroutable = has('EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL');
  if (unroutable) {
    if (proxy) return viaProxy(`no route to the proxy (${unroutable})`, 'check the proxy address and this machine\'s network', unroutable);
    return unreachable(`no route to ${where} (${unroutable})`, 'check the address, this machine\'s network, and whether staging is only reachable through a proxy (HTTPS_PROXY)', unroutable);
  }
  const closed = has('ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED');
  if (closed) {
    const hint = target.protocol === 'http:' ? 'is it an HTTP service? an https service needs https://' : 'check that the address serves HTTPS';
    return unreachable(`the connection to ${where} closed before any HTTP answer (${closed})`, hint, closed);
  }
  const code = codes[0];
  return unreachable(`no HTTP answer (${code ? `${code}: ` : ''}${text || String(err)})`, 'check the address and that the service is up', code);
}
