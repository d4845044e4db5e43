// Builds a curl command that reproduces one request (Schemathesis-style), with the
// credential masked: the reader pastes their own key in place of ***.
import { isCredentialHeader, maskAuthorization, redact, redactUrl } from './redact.ts';

export interface CurlInput {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  stream?: boolean;
}

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function toCurl(req: CurlInput): string {
  const parts = ['curl', '-sS', '-i', '--compressed'];
  if (req.stream) parts.push('-N');
  if (req.method !== 'GET' || req.body !== undefined) parts.push('-X', req.method);
  parts.push(quote(redactUrl(req.url)));
  for (const [name, value] of Object.entries(req.headers)) {
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
