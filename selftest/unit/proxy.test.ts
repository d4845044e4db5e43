// lib/http/proxy.ts (which proxy applies, read as curl reads the variables) and the causes
// lib/http/preflight.ts names for errors that need no server to provoke (a proxy's CONNECT
// answers). The real proxy, TLS servers and unreachable targets: selftest/e2e/proxy-*.test.ts, tls-*.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { Agent, ProxyAgent } from 'undici';
import { bypassesProxy, bypassProxyFor, createDispatcher, maskProxyUrl, proxyFor } from '../../lib/http/proxy.ts';
import { explain } from '../../lib/http/preflight.ts';
import { toCurl } from '../../lib/http/curl.ts';
import { ConfigError } from '../../lib/run/config.ts';

const HTTPS = 'https://staging.example.com/v1';
const HTTP = 'http://staging.example.com:8080/v1';

describe('which proxy applies', () => {
  it('https targets read https_proxy before HTTPS_PROXY; http targets http_proxy before HTTP_PROXY; no cross-over', () => {
    expect(proxyFor(HTTPS, { HTTPS_PROXY: 'http://up:3128' })?.variable).toBe('HTTPS_PROXY');
    expect(proxyFor(HTTPS, { https_proxy: 'http://low:3128', HTTPS_PROXY: 'http://up:3128' })).toMatchObject({ variable: 'https_proxy', url: 'http://low:3128/' });
    expect(proxyFor(HTTP, { http_proxy: 'http://low:3128', HTTP_PROXY: 'http://up:3128' })?.variable).toBe('http_proxy');
    expect(proxyFor(HTTP, { HTTP_PROXY: 'http://up:3128' })?.variable).toBe('HTTP_PROXY');
    // As curl: an https target does not fall back to HTTP_PROXY, nor an http target to HTTPS_PROXY.
    expect(proxyFor(HTTPS, { HTTP_PROXY: 'http://up:3128' })).toBeUndefined();
    expect(proxyFor(HTTP, { HTTPS_PROXY: 'http://up:3128' })).toBeUndefined();
    expect(proxyFor(HTTPS, {})).toBeUndefined();
  });

  it('accepts host:port without a scheme (curl does), and refuses what is no http(s) proxy URL', () => {
    expect(proxyFor(HTTPS, { HTTPS_PROXY: 'proxy.corp:3128' })?.url).toBe('http://proxy.corp:3128/');
    expect(() => proxyFor(HTTPS, { HTTPS_PROXY: 'socks5://proxy.corp:1080' })).toThrow(ConfigError);
    expect(() => proxyFor(HTTPS, { HTTPS_PROXY: 'http://[bad' })).toThrow(/HTTPS_PROXY: .*not a proxy URL/);
  });

  it('NO_PROXY: exact hosts, domains with or without a leading dot, ports, IPv6, "*"; no_proxy first', () => {
    const t = (url: string, list: string, name = 'NO_PROXY') => bypassesProxy(new URL(url), { [name]: list });
    expect(t('https://api.example.com/v1', 'example.com')).toBe(true);
    expect(t('https://api.example.com/v1', '.example.com')).toBe(true);
    expect(t('https://api.example.com/v1', '*.example.com')).toBe(true);
    expect(t('https://example.com/v1', 'example.com')).toBe(true);
    expect(t('https://notexample.com/v1', 'example.com')).toBe(false);
    expect(t('https://api.example.com/v1', 'other.org, example.com')).toBe(true);
    expect(t('https://api.example.com/v1', 'example.com:443')).toBe(true);
    expect(t('https://api.example.com:8443/v1', 'example.com:443')).toBe(false);
    expect(t('http://[::1]:8080/v1', '::1')).toBe(true);
    expect(t('http://[::1]:8080/v1', '[::1]:8080')).toBe(true);
    expect(t('http://127.0.0.1:8080/v1', '127.0.0.1')).toBe(true);
    expect(t('http://localhost:8080/v1', '127.0.0.1')).toBe(false);
    expect(t('https://anything.example/v1', '*')).toBe(true);
    expect(t('https://api.example.com/v1', 'example.com', 'no_proxy')).toBe(true);
    expect(bypassesProxy(new URL(HTTPS), { no_proxy: 'other.org', NO_PROXY: 'example.com' })).toBe(false);
    expect(proxyFor(HTTPS, { HTTPS_PROXY: 'http://p:1', NO_PROXY: 'staging.example.com' })).toBeUndefined();
  });

  it('the runner exempts its own embedded server by adding to the NO_PROXY variable in force', () => {
    const env: NodeJS.ProcessEnv = { NO_PROXY: 'example.com' };
    bypassProxyFor('127.0.0.1', env);
    expect(env.NO_PROXY).toBe('example.com,127.0.0.1');
    const lower: NodeJS.ProcessEnv = { no_proxy: '' };
    bypassProxyFor('127.0.0.1', lower);
    expect(lower).toEqual({ no_proxy: '127.0.0.1' });
  });

  it('builds undici\'s ProxyAgent when a proxy applies, a plain Agent otherwise', async () => {
    const a = createDispatcher(HTTPS, {}, { HTTPS_PROXY: 'http://127.0.0.1:9' });
    const b = createDispatcher(HTTPS, {}, {});
    expect(a).toBeInstanceOf(ProxyAgent);
    expect(b).toBeInstanceOf(Agent);
    await Promise.all([a.close(), b.close()]);
  });

  it('masks proxy credentials wherever the URL is shown', () => {
    expect(maskProxyUrl('http://alice:s3cr3t@proxy:3128/')).toBe('http://alice:***@proxy:3128/');
    expect(maskProxyUrl('http://tokenonly@proxy:3128')).toBe('http://***@proxy:3128');
    expect(maskProxyUrl('proxy:3128')).toBe('proxy:3128');
    expect(proxyFor(HTTPS, { HTTPS_PROXY: 'http://alice:s3cr3t-pw@proxy:3128' })?.shown).toBe('http://alice:***@proxy:3128/');
  });
});

describe('curl reproductions through the proxy', () => {
  const saved = { ...process.env };
  afterEach(() => {
    for (const k of ['HTTPS_PROXY', 'HTTP_PROXY', 'https_proxy', 'http_proxy', 'NO_PROXY', 'no_proxy']) {
      if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
    }
  });
  it('carry --proxy (password masked) when one applies; --proxytunnel for http:// targets, as undici tunnels them', () => {
    for (const k of ['https_proxy', 'http_proxy', 'no_proxy', 'NO_PROXY']) delete process.env[k];
    process.env.HTTPS_PROXY = 'http://alice:s3cr3t-pw@proxy.corp:3128';
    process.env.HTTP_PROXY = 'http://proxy.corp:3128';
    const https = toCurl({ method: 'GET', url: `${HTTPS}/models`, headers: { authorization: 'Bearer sk-unit-0123456789' } });
    expect(https).toBe(`curl -sS -i --compressed --proxy 'http://alice:***@proxy.corp:3128/' 'https://staging.example.com/v1/models' -H 'authorization: Bearer ***'`);
    const http = toCurl({ method: 'GET', url: `${HTTP}/models`, headers: {} });
    expect(http).toBe(`curl -sS -i --compressed --proxy 'http://proxy.corp:3128/' --proxytunnel 'http://staging.example.com:8080/v1/models'`);
    process.env.NO_PROXY = 'example.com';
    expect(toCurl({ method: 'GET', url: `${HTTPS}/models`, headers: {} })).not.toContain('--proxy');
  });
});

describe('preflight causes that need no server', () => {
  const target = new URL(HTTPS);
  const proxy = proxyFor(target, { HTTPS_PROXY: 'http://alice:pw-123456789@proxy.corp:3128' })!;
  const ctx = { target, proxy, timeoutMs: 30_000, connectMs: 10_000, timedOut: false };
  const connectAnswered = (status: number) => Object.assign(new Error(`Proxy response (${status}) !== 200 when HTTP Tunneling`), { code: 'UND_ERR_ABORTED' });
  it('a CONNECT answered 403 or 502 names the proxy, the status and the way out', () => {
    const u = explain(connectAnswered(403), ctx);
    expect(u.variable).toBe('HTTPS_PROXY');
    expect(u.message).toBe('proxy http://alice:***@proxy.corp:3128/ (for staging.example.com:443): it answered 403 to CONNECT staging.example.com:443 (it refuses or cannot reach the target); ask for staging.example.com:443 to be allowed through it, or set NO_PROXY=staging.example.com if the target is reachable directly');
    expect(explain(connectAnswered(502), ctx).message).toMatch(/answered 502 to CONNECT/);
  });
  it('407 says where the credentials go', () => {
    expect(explain(connectAnswered(407), ctx).message).toMatch(/asks for credentials \(407 Proxy Authentication Required\); put them in the proxy URL: HTTPS_PROXY=http:\/\/user:password@host:port/);
  });
  it('a DNS failure with a proxy in force is the proxy host\'s (the target is resolved by the proxy)', () => {
    const err = Object.assign(new Error('getaddrinfo ENOTFOUND proxy.corp'), { code: 'ENOTFOUND' });
    expect(explain(err, ctx)).toMatchObject({ variable: 'HTTPS_PROXY', code: 'ENOTFOUND' });
    expect(explain(err, { ...ctx, proxy: undefined })).toMatchObject({ variable: 'TARGET_URL', code: 'ENOTFOUND' });
  });
  it('an untrusted chain while NODE_EXTRA_CA_CERTS is already set: says that file is not the issuing CA', () => {
    const err = Object.assign(new Error('unable to verify the first certificate'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    expect(explain(err, { ...ctx, proxy: undefined }).message).toMatch(/set NODE_EXTRA_CA_CERTS=\/path\/to\/ca\.pem/);
    expect(explain(err, { ...ctx, proxy: undefined, extraCa: '/etc/other-ca.pem' }).message).toMatch(/NODE_EXTRA_CA_CERTS=\/etc\/other-ca\.pem is set but does not hold the CA that issued it/);
  });
  it('an address that is not TLS at all: the handshake error suggests http://', () => {
    const err = Object.assign(new Error('write EPROTO ... wrong version number'), { code: 'EPROTO' });
    expect(explain(err, { ...ctx, proxy: undefined }).message).toMatch(/TLS handshake with staging\.example\.com:443 failed \(EPROTO\); .*needs http:\/\//);
  });
});
