// Builds a curl command that reproduces one request (Schemathesis-style), with the
// credential masked: the reader pastes their own key in place of ***.
import { isCredentialHeader, maskAuthorization, redact, redactUrl } from '../run/redact.ts';
import { proxyFor } from './proxy.ts';
import { withExtraHeaders } from './extra-headers.ts';

export interface CurlInput {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  stream?: boolean;
  /** Whose HEADERS and proxy variables the request went with (a k6 run's, read from its summaries); default this process's. */
  env?: NodeJS.ProcessEnv;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function toCurl(req: CurlInput): string {
  const parts = ['curl', '-sS', '-i', '--compressed'];
  if (req.stream) parts.push('-N');
  if (req.method !== 'GET' || req.body !== undefined) parts.push('-X', req.method);
  // The run went through a proxy (lib/http/proxy.ts): so does the reproduction, through a CONNECT
  // tunnel as undici does (curl forwards plain http:// unless told --proxytunnel). Credentials masked.
  const proxy = safeProxyFor(req.url, req.env);
  if (proxy) parts.push('--proxy', quote(proxy.shown), ...(req.url.startsWith('http:') ? ['--proxytunnel'] : []));
  parts.push(quote(redactUrl(req.url)));
  // Every request of the run carries the HEADERS (secret values shown as ***), so does its reproduction.
  for (const [name, value] of Object.entries(withExtraHeaders(req.headers, req.env))) {
    const lower = name.toLowerCase();
    if (lower === 'content-length' || lower === 'accept-encoding' || lower === 'user-agent') continue;
    const shown = lower === 'authorization' ? maskAuthorization(value) : isCredentialHeader(lower) ? '***' : value;
    parts.push('-H', quote(`${name}: ${shown}`));
  }
  if (req.body !== undefined) {
    const body = req.body.length > 4000 ? `${req.body.slice(0, 4000)}…` : req.body;
    parts.push('--data-raw', quote(body));
  }
  return redact(parts.join(' '));
}

function safeProxyFor(url: string, env: NodeJS.ProcessEnv = process.env): ReturnType<typeof proxyFor> {
  try {
    return proxyFor(url, env);
  } catch {
    return undefined; // a malformed proxy variable stops the run before any request (lib/http/preflight.ts)
  }
}
