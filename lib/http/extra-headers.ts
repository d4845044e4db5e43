// The extra request headers of the run (HEADERS, HEADERS_FILE; rules in
// lib/http/header-lines.ts), for every path that sends to the target: the raw client and
// its probes, the client libraries, the fuzz phase, the preflight, the load harness,
// and the curl lines. Read from the environment once per process (the runner's test
// workers and the load harness's children inherit it), already checked by loadConfig
// in the entry points, which exit 2 on a bad one.
//
// Secret values (every name not on HARMLESS_HEADERS) are registered with lib/run/redact.ts
// like the keys: masked in everything written, searched for in responses (AUTH-9), and
// the header's value is shown as *** wherever request headers are shown.
import { loadExtraHeaders } from '../run/config.ts';
import { headerRecord, type ExtraHeader } from './header-lines.ts';
import { addSecret, addSecretHeaderName } from '../run/redact.ts';

let cached: { key: string; headers: ExtraHeader[]; record: Record<string, string> } | undefined;

/** The run's extra headers (validated; throws ConfigError on a bad HEADERS or HEADERS_FILE). */
export function extraHeaderList(env: NodeJS.ProcessEnv = process.env): ExtraHeader[] {
  const key = `${env.HEADERS ?? ''}\u0000${env.HEADERS_FILE ?? ''}`;
  if (cached?.key !== key) {
    const headers = loadExtraHeaders(env);
    registerSecrets(headers);
    cached = { key, headers, record: headerRecord(headers) };
  }
  return cached.headers;
}

/** The run's extra headers as a plain object, to spread into a request's headers. A fresh copy each call. */
export function extraHeaders(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  extraHeaderList(env);
  return { ...cached!.record };
}

/**
 * The one place a process registers the run's secrets: the keys it holds, labelled by
 * the variable they came from, and the secret HEADERS values (registered on first read).
 */
export function registerRunSecrets(keys: Record<string, string | undefined>, env: NodeJS.ProcessEnv = process.env): void {
  for (const [label, value] of Object.entries(keys)) addSecret(value, label);
  extraHeaderList(env);
}

/** Registers the secret values (masked, echo-scanned) and names (value shown as ***). */
export function registerSecrets(headers: readonly ExtraHeader[]): void {
  for (const h of headers) {
    if (!h.secret) continue;
    addSecretHeaderName(h.name);
    addSecret(h.value, `HEADERS ${h.name}`);
  }
}

/**
 * `headers` with the run's extra headers added, for a request to the target. A header
 * the request sets itself wins (compared without case): a probe's own subject stays its own.
 */
export function withExtraHeaders(headers: Record<string, string>, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const extra = extraHeaders(env);
  const own = new Set(Object.keys(headers).map((k) => k.toLowerCase()));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(extra)) if (!own.has(k.toLowerCase())) out[k] = v;
  return { ...out, ...headers };
}
