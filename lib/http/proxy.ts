// Forward proxies from the environment, for every path that sends to the target (raw
// client, the client libraries' fetch, the load harness's lean client, the preflight)
// and for the curl lines that reproduce a request. One decision, made here:
//
// - https://... targets use https_proxy, else HTTPS_PROXY; http://... targets use
//   http_proxy, else HTTP_PROXY (lower case first, as curl and undici read them; no
//   fallback from one scheme's variable to the other's, as curl).
// - no_proxy, else NO_PROXY: comma (or space) separated host names, each matching the
//   host itself and its subdomains ("example.com" and ".example.com" both match
//   api.example.com), an optional ":port", or "*" for every host. Loopback is not
//   exempt (curl does not exempt it either): list it to go direct.
//
// The dispatcher is undici's own ProxyAgent, never a hand-written CONNECT. It tunnels
// (HTTP CONNECT) for https:// and, since undici 7 (proxyTunnel defaults to true), for
// http:// targets too: the proxy sees "CONNECT host:port" and then relays bytes. For an
// https target those bytes are TLS, so the key never crosses the proxy in clear; for
// an http target they are the plain request, key included (the proxy does not parse
// it, but it relays it in clear): use https through a proxy.
import { Agent, ProxyAgent, type Dispatcher } from 'undici';
import { ConfigError } from '../run/config.ts';
import { addSecret } from '../run/redact.ts';
import { maskProxyUrl } from './proxy-mask.ts';

export { maskProxyUrl };

export interface ProxyChoice {
  /** The proxy URL as configured, credentials included: never print it, print `shown`. */
  url: string;
  /** The URL with any password masked (user:***@host:port), for messages and curl lines. */
  shown: string;
  /** The variable it came from: https_proxy, HTTPS_PROXY, http_proxy or HTTP_PROXY. */
  variable: string;
  /** The target goes through a CONNECT tunnel (always, with undici 7's defaults). */
  tunnel: true;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

function firstSet(env: NodeJS.ProcessEnv, names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/** The proxy URL of a variable, checked: curl accepts host:port without a scheme, so do we. */
export function parseProxyUrl(variable: string, raw: string): URL {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(variable, `"${maskProxyUrl(raw)}" is not a proxy URL; set it like http://proxy.example:3128`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(variable, `proxy scheme ${url.protocol} is not supported; use an http:// (or https://) proxy`);
  }
  return url;
}

/** True when NO_PROXY (no_proxy first) says the host goes direct. */
export function bypassesProxy(target: URL, env: NodeJS.ProcessEnv = process.env): boolean {
  const list = (env.no_proxy ?? env.NO_PROXY ?? '').trim();
  if (!list) return false;
  if (list === '*') return true;
  const host = target.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  const port = Number(target.port) || DEFAULT_PORTS[target.protocol] || 0;
  for (const raw of list.split(/[\s,]+/)) {
    if (!raw) continue;
    if (raw === '*') return true;
    // host, host:port, [v6] or [v6]:port; a bare v6 address has several colons and no port.
    let name = raw;
    let entryPort = 0;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(raw);
    const hostPort = /^([^:]+):(\d+)$/.exec(raw);
    if (bracketed) { name = bracketed[1]!; entryPort = Number(bracketed[2] ?? 0); }
    else if (hostPort) { name = hostPort[1]!; entryPort = Number(hostPort[2]); }
    const entry = name.replace(/^\*?\./, '').toLowerCase().replace(/\.$/, '');
    if (entryPort && entryPort !== port) continue;
    if (host === entry || host.endsWith(`.${entry}`)) return true;
  }
  return false;
}

/** The proxy the environment sets for requests to `target`, or undefined (direct). Throws ConfigError on a malformed proxy URL. */
export function proxyFor(target: string | URL, env: NodeJS.ProcessEnv = process.env): ProxyChoice | undefined {
  const url = typeof target === 'string' ? new URL(target) : target;
  const names = url.protocol === 'https:' ? ['https_proxy', 'HTTPS_PROXY'] : ['http_proxy', 'HTTP_PROXY'];
  const set = firstSet(env, names);
  if (!set || bypassesProxy(url, env)) return undefined;
  const parsed = parseProxyUrl(set.name, set.value);
  // A proxy password is a secret like the keys: masked wherever it might be quoted.
  if (parsed.password) addSecret(decodeURIComponent(parsed.password), set.name);
  return { url: parsed.href, shown: maskProxyUrl(parsed.href), variable: set.name, tunnel: true };
}

/** Options for the dispatcher: undici Agent options (timeouts, connections, keep-alive). */
export type DispatcherOptions = Agent.Options;

/**
 * The dispatcher for requests to `target`: undici's ProxyAgent when a proxy applies
 * (it keeps `options` for its connections to the target through the tunnel), else a
 * plain Agent with `options`.
 */
export function createDispatcher(target: string | URL, options: DispatcherOptions = {}, env: NodeJS.ProcessEnv = process.env): Dispatcher {
  const proxy = proxyFor(target, env);
  if (!proxy) return new Agent(options);
  return new ProxyAgent({ ...options, uri: proxy.url });
}

const shared = new Map<string, Dispatcher>();

/**
 * For code that sends on undici's global dispatcher (the client libraries' fetch): the
 * proxy agent to use for `target` (one per proxy, kept for the process), or undefined
 * when no proxy applies and the global dispatcher is right.
 */
export function sharedProxyDispatcher(target: string | URL, env: NodeJS.ProcessEnv = process.env): Dispatcher | undefined {
  const proxy = proxyFor(target, env);
  if (!proxy) return undefined;
  let d = shared.get(proxy.url);
  if (!d) shared.set(proxy.url, d = new ProxyAgent({ uri: proxy.url }));
  return d;
}

/**
 * Makes `host` go direct (the embedded reference server the runner started itself on
 * loopback: a corporate proxy cannot reach this machine's 127.0.0.1). Appends to
 * the NO_PROXY variable in force (no_proxy when set, else NO_PROXY).
 */
export function bypassProxyFor(host: string, env: NodeJS.ProcessEnv = process.env): void {
  const name = env.no_proxy !== undefined ? 'no_proxy' : 'NO_PROXY';
  const current = env[name]?.trim();
  env[name] = current ? `${current},${host}` : host;
}
