// The scripts' setup(): before any load, one GET /models with the key. No HTTP answer
// at all (refused, unknown host, TLS, timeout, proxy) stops the run with one line that
// names the cause, k6's error code and the fix; an HTTP answer of any status goes on
// (judging it is the thresholds' job). A missing API_KEY is reported here too, since
// the init code must run without one (see targetConfig in config.ts).
//
// The causes follow k6's error codes (lib/netext/httpext/error_codes.go in k6):
// 1050 request timeout, 11xx DNS, 1211 dial timeout, 1212 refused, 1220 reset,
// 13xx TLS (1310 unknown authority, 1311 host name mismatch), 16xx HTTP/2; a proxy
// that cannot be reached shows as "proxyconnect" in the error text (k6 follows
// HTTPS_PROXY / HTTP_PROXY / NO_PROXY like Go's net/http).
import { expectedStatuses, request } from 'k6/http';
import exec from 'k6/execution';
import { extraHeaders, missingKey, redact, type TargetConfig } from './config.ts';
import { notRun } from './metrics.ts';

/** Ends the run from setup(): exec.test.abort where k6 has it (exit 108), else an exception (exit 107). */
export function stopRun(message: string): never {
  notRun.add(1);
  const test = (exec as unknown as { test?: { abort?: (reason?: string) => void } }).test;
  if (test && typeof test.abort === 'function') test.abort(message);
  throw new Error(message);
}

interface Cause { cause: string; fix: string }

/** What a k6 error code (and its text) means for a user, and what to do about it. */
export function explain(code: number, error: string, timeoutMs: number): Cause {
  const text = error.toLowerCase();
  if (text.indexOf('proxyconnect') >= 0) {
    return { cause: 'the forward proxy could not be reached', fix: 'check HTTPS_PROXY / HTTP_PROXY (or list the host in NO_PROXY to bypass the proxy)' };
  }
  if (code === 1050) return { cause: `no answer within TIMEOUT_MS (${timeoutMs} ms)`, fix: 'check that the host is reachable from here (firewall, proxy: HTTPS_PROXY / NO_PROXY), or raise TIMEOUT_MS' };
  if (code >= 1100 && code < 1200) return { cause: 'the host name does not resolve (DNS)', fix: 'check the host in TARGET_URL, or this machine\'s DNS' };
  if (code === 1211) return { cause: 'connecting timed out', fix: 'check the host and port in TARGET_URL and any firewall between here and the target' };
  if (code === 1212) return { cause: 'connection refused', fix: 'nothing listens at that host and port: check the port in TARGET_URL, or start the server' };
  if (code === 1220) return { cause: 'the connection was reset', fix: 'check the scheme and port in TARGET_URL (https:// for a TLS port) and any proxy or firewall in between' };
  if (code === 1310) {
    return {
      cause: 'TLS: the certificate is signed by an authority k6 does not trust',
      fix: 'k6 uses the system\'s CA store: add your CA to it, or on Linux set SSL_CERT_FILE=/path/to/bundle.pem (a PEM bundle that includes your CA)',
    };
  }
  if (code === 1311) return { cause: 'TLS: the certificate does not name this host', fix: 'use the host name the certificate was issued for in TARGET_URL' };
  if (text.indexOf('expired') >= 0 || text.indexOf('not yet valid') >= 0) {
    return { cause: 'TLS: the certificate has expired or is not yet valid', fix: 'renew the server\'s certificate (or check this machine\'s clock)' };
  }
  if (code >= 1300 && code < 1400) return { cause: 'TLS handshake failed', fix: 'check the scheme in TARGET_URL (https:// only for a TLS port) and the server\'s TLS set-up' };
  if (code >= 1200 && code < 1300) return { cause: 'TCP error', fix: 'check the host and port in TARGET_URL and the network in between' };
  if (code >= 1600 && code < 1700) return { cause: 'HTTP/2 error', fix: 'check the server or gateway in front of it' };
  return { cause: 'no HTTP answer', fix: 'check TARGET_URL and the network between here and the target' };
}

export function unreachableMessage(targetUrl: string, code: number, error: string, timeoutMs: number): string {
  const { cause, fix } = explain(code, error, timeoutMs);
  return `chatgate k6: TARGET_URL ${targetUrl} gave no HTTP answer to GET /models: ${cause} (k6 error ${code}: ${error}); ${fix}`;
}

/** setup() of every script: key present, target answers HTTP. Returns nothing; stops the run otherwise. */
export function checkTarget(cfg: TargetConfig): void {
  const missing = missingKey(cfg);
  if (missing) stopRun(missing.message);
  const res = request('GET', `${cfg.targetUrl}/models`, null, {
    headers: { ...extraHeaders(), Authorization: `Bearer ${cfg.apiKey}` },
    tags: { name: 'GET /models (reachability)', kind: 'reachability' },
    timeout: cfg.timeoutMs,
    responseType: 'none',
    // Any HTTP status is an answer here: this request must not count in http_req_failed,
    // whose thresholds judge the load, not the check before it.
    responseCallback: expectedStatuses({ min: 100, max: 599 }),
  });
  if (res.status === 0) stopRun(redact(unreachableMessage(cfg.targetUrl, res.error_code, res.error, cfg.timeoutMs)));
  notRun.add(0);
}

/** setup() sends one request bounded by TIMEOUT_MS: give it that long plus a margin (k6's default is 60 s). */
export function setupTimeout(cfg: TargetConfig): string {
  return `${Math.ceil(cfg.timeoutMs / 1000) + 30}s`;
}
