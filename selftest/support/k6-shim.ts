// A stand-in for k6's runtime, just enough to execute the built bundles in Node:
// no k6 binary exists here, and the bundles' logic (options from __ENV, request
// bodies, checks, custom metrics, handleSummary) should be proven on every
// machine, not only where k6 is installed. Requests are answered synchronously by
// the test (usually with bytes captured from the reference server beforehand), the
// way k6/http is synchronous.
//
// An ES module bundle is evaluated as a function body: its `import ... from "k6..."`
// lines become lookups in the fake modules and its final `export { ... }` a return
// value, so each load runs the init code afresh with its own __ENV. A CommonJS bundle
// (dist/base/, for --compatibility-mode=base) gets require, module and exports. Any
// other import or require left in a bundle makes loading fail, which is itself a check.
import { readFileSync } from 'node:fs';

export interface ShimRequest { method: string; url: string; body: string | null; params: Record<string, any> }

export interface ShimReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  timings?: { waiting?: number; duration?: number };
  error?: string;
  /** k6's error code for a request without an HTTP answer (1212 refused, 1101 no such host, ...). */
  error_code?: number;
}

/** What the xk6-sse stand-in plays to a script's handlers: the extension's events and errors, in order. */
export type ShimSseCall = ({ event: { id?: string; comment?: string; name?: string; data?: string } } | { error: string }) & { at?: number };
export interface ShimSseReply { status: number; headers?: Record<string, string>; error?: string; calls?: ShimSseCall[] }

export interface Sample { metric: string; value: number; tags: Record<string, string>; metadata?: Record<string, string | number | boolean> }

export interface K6Shim {
  env: Record<string, string>;
  respond: (req: ShimRequest) => ShimReply;
  /** Answers sse.open of k6/x/sse (chat-stream-sse); unset: a 200 stream of nothing. */
  sse?: (req: ShimRequest) => ShimSseReply;
  /** Called with a call's `at` before it is played (a test's fake clock). */
  onSseAt?: (at: number) => void;
  requests: ShimRequest[];
  checks: Record<string, { passes: number; fails: number }>;
  samples: Sample[];
  metrics: Record<string, { type: string; isTime: boolean }>;
  responseCallback: unknown;
  logs: string[];
  /** Seconds slept so far (sleep() returns at once unless onSleep really waits). */
  slept: number;
  onSleep?: (seconds: number) => void;
  vu: { idInTest: number; idInInstance: number; iterationInScenario: number; iterationInInstance: number; metrics: { tags: Record<string, string>; metadata: Record<string, string | number | boolean> } };
  scenario: { name: string; iterationInTest: number };
  /** k6/execution's test.options (the consolidated options: executionSegment, tags, ...); {} unless a test sets it. */
  testOptions?: Record<string, unknown>;
}

/** Go's http.CanonicalHeaderKey: what k6 shows as header names ("retry-after-ms" -> "Retry-After-Ms"). */
export function canonicalHeader(name: string): string {
  return name.toLowerCase().replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

function modules(shim: K6Shim): Record<string, Record<string, unknown>> {
  const k6 = {
    check(val: unknown, sets: Record<string, (v: unknown) => unknown>, tags?: Record<string, string>) {
      void tags;
      let all = true;
      for (const [name, fn] of Object.entries(sets)) {
        let ok: boolean;
        try { ok = !!fn(val); } catch { ok = false; }
        const c = (shim.checks[name] ??= { passes: 0, fails: 0 });
        if (ok) c.passes++; else c.fails++;
        all = all && ok;
      }
      return all;
    },
    sleep(s: number) { shim.slept += s; shim.onSleep?.(s); },
    group<T>(_name: string, fn: () => T) { return fn(); },
    fail(msg?: string): never { throw new Error(msg); },
  };
  const request = (method: string, url: string, body: string | null = null, params: Record<string, any> = {}) => {
    const req = { method, url, body, params };
    shim.requests.push(req);
    const r = shim.respond(req);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers ?? {})) headers[canonicalHeader(k)] = v;
    const waiting = r.timings?.waiting ?? 5;
    const duration = r.timings?.duration ?? waiting + 1;
    return {
      status: r.status,
      headers,
      body: r.body ?? (r.status === 0 ? null : ''),
      error: r.error ?? '',
      error_code: r.error_code ?? 0,
      url,
      timings: { blocked: 0, connecting: 0, tls_handshaking: 0, sending: 0, waiting, receiving: duration - waiting, duration },
      json() { return JSON.parse(r.body ?? ''); },
    };
  };
  const http = {
    request,
    post: (url: string, body?: string | null, params?: Record<string, any>) => request('POST', url, body ?? null, params),
    get: (url: string, params?: Record<string, any>) => request('GET', url, null, params),
    setResponseCallback(cb: unknown) { shim.responseCallback = cb; },
    expectedStatuses(...statuses: unknown[]) { return { expectedStatuses: statuses }; },
  };
  class Metric {
    constructor(readonly name: string, isTime = false, type = 'metric') { shim.metrics[name] = { type, isTime }; }
    add(value: number | boolean, tags?: Record<string, string>) {
      // exec.vu.metrics.metadata rides on every sample added while it is set, as k6's JSON output shows it.
      const md = shim.vu.metrics.metadata;
      shim.samples.push({ metric: this.name, value: Number(value), tags: { ...tags }, ...(Object.keys(md).length ? { metadata: { ...md } } : {}) });
    }
  }
  const metrics = {
    Counter: class extends Metric { constructor(n: string, t?: boolean) { super(n, t, 'counter'); } },
    Rate: class extends Metric { constructor(n: string, t?: boolean) { super(n, t, 'rate'); } },
    Trend: class extends Metric { constructor(n: string, t?: boolean) { super(n, t, 'trend'); } },
    Gauge: class extends Metric { constructor(n: string, t?: boolean) { super(n, t, 'gauge'); } },
  };
  const execution = {
    vu: shim.vu,
    scenario: shim.scenario,
    instance: { vusActive: 1, iterationsCompleted: 0 },
    test: { abort(reason?: string): never { throw new Error(`test aborted: ${reason}`); }, get options() { return shim.testOptions ?? {}; } },
  };
  // xk6-sse: open() sends, plays the reply's events and errors to the handlers, then returns the response.
  const sse = {
    open(url: string, params: Record<string, any>, setup: (client: unknown) => void) {
      const req = { method: params.method ?? 'GET', url, body: params.body ?? null, params };
      shim.requests.push(req);
      const r = shim.sse ? shim.sse(req) : { status: 200, headers: { 'Content-Type': 'text/event-stream' } };
      const handlers: Record<string, Array<(v?: unknown) => void>> = {};
      let closed = false;
      setup({ on(ev: string, fn: (v?: unknown) => void) { (handlers[ev] ??= []).push(fn); }, close() { closed = true; } });
      if (r.error) return { url, status: 0, headers: {}, error: r.error };
      for (const fn of handlers.open ?? []) fn();
      for (const call of r.calls ?? []) {
        if (closed) break;
        if (call.at !== undefined) shim.onSseAt?.(call.at);
        if ('event' in call) for (const fn of handlers.event ?? []) fn({ id: '', comment: '', name: '', data: '', ...call.event });
        else for (const fn of handlers.error ?? []) { const message = call.error; fn({ error: () => message }); }
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(r.headers ?? {})) headers[canonicalHeader(k)] = v;
      return { url, status: r.status, headers, error: '' };
    },
  };
  return { k6, 'k6/http': http, 'k6/metrics': metrics, 'k6/execution': execution, 'k6/x/sse': sse };
}

/** Rewrites the bundle's import/export statements (esbuild's fixed ESM output) into a function body. */
export function toFunctionBody(code: string): string {
  let body = code.replace(/^import\s+(.+?)\s+from\s+"([^"]+)";$/gm, (_m, what: string, mod: string) => {
    if (!/^k6(\/|$)/.test(mod)) throw new Error(`bundle imports ${mod}, which k6 does not provide`);
    const src = `__k6mod(${JSON.stringify(mod)})`;
    if (what.startsWith('{')) return `const ${what.replace(/\s+as\s+/g, ': ')} = ${src};`;
    if (what.startsWith('* as ')) return `const ${what.slice(5)} = ${src};`;
    return `const ${what} = ${src}.default;`;
  });
  body = body.replace(/^export\s*\{([^}]*)\};?\s*$/m, (_m, list: string) => {
    const entries = list.split(',').map((s) => s.trim()).filter(Boolean).map((s) => {
      const [local, exported] = s.split(/\s+as\s+/);
      return `${JSON.stringify(exported ?? local)}: ${local}`;
    });
    return `return { ${entries.join(', ')} };`;
  });
  if (/^\s*(import|export)\s/m.test(body)) throw new Error('bundle has import/export statements the stand-in cannot rewrite');
  return `"use strict";\n${body}`;
}

/** A CommonJS bundle (dist/base/): module.exports and require(), no import/export statements. */
export function isCommonJs(code: string): boolean {
  return /^module\.exports\s*=/m.test(code) && !/^\s*(import|export)\s/m.test(code);
}

export interface LoadedBundle {
  exports: Record<string, any>;
  shim: K6Shim;
}

/** Evaluates a bundle's init code with this __ENV; requests go to `respond`. */
export function loadBundle(file: string, env: Record<string, string>, respond: (req: ShimRequest) => ShimReply = () => ({ status: 200, body: '{}' })): LoadedBundle {
  const shim: K6Shim = {
    env, respond, requests: [], checks: {}, samples: [], metrics: {}, responseCallback: undefined, logs: [], slept: 0,
    vu: { idInTest: 7, idInInstance: 1, iterationInScenario: 0, iterationInInstance: 0, metrics: { tags: {}, metadata: {} } },
    scenario: { name: 'default', iterationInTest: 0 },
  };
  const mods = modules(shim);
  const fakeConsole = {
    log: (...a: unknown[]) => shim.logs.push(a.join(' ')),
    warn: (...a: unknown[]) => shim.logs.push(a.join(' ')),
    error: (...a: unknown[]) => shim.logs.push(a.join(' ')),
  };
  const code = readFileSync(file, 'utf8');
  if (isCommonJs(code)) {
    // --compatibility-mode=base bundles: require() gets k6's module objects as k6 hands
    // them to CommonJS code (the module itself, no `default` wrapper); exports are read
    // from module.exports after the body ran, as k6 does.
    const module = { exports: {} as Record<string, any> };
    const fn = new Function('require', 'module', 'exports', '__ENV', 'console', code);
    fn((name: string) => {
      if (!/^k6(\/|$)/.test(name)) throw new Error(`bundle requires ${name}, which k6 does not provide`);
      const m = mods[name];
      if (!m) throw new Error(`no stand-in for ${name}`);
      return m;
    }, module, module.exports, env, fakeConsole);
    return { exports: module.exports, shim };
  }
  const fn = new Function('__k6mod', '__ENV', 'console', toFunctionBody(code));
  const exports = fn((name: string) => {
    const m = mods[name];
    if (!m) throw new Error(`no stand-in for ${name}`);
    return { ...m, default: m };
  }, env, fakeConsole) as Record<string, any>;
  return { exports, shim };
}

/** Sum of a metric's samples, optionally only those whose tags match. */
export function total(shim: K6Shim, metric: string, tags: Record<string, string> = {}): number {
  return shim.samples
    .filter((s) => s.metric === metric && Object.entries(tags).every(([k, v]) => s.tags[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

export function failedChecks(shim: K6Shim): string[] {
  return Object.entries(shim.checks).filter(([, c]) => c.fails > 0).map(([name]) => name);
}
