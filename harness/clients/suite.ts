// The client-compatibility tests (SVC-4, SVC-4b): one clause test per cell of the
// client x operation matrix, each a call made the way the client's users make it,
// against the target of this run. suites/clients/<client>.test.ts calls
// clientSuite(); the 429 cells live in suites/limits.test.ts (rateLimitCell) because
// they must not overlap the rate-limit probe on the same key.
//
// Every cell's record carries `matrix: { client, operation }`; the client's own words
// (its error class and message, or what it returned) are in `observations` on a pass
// and in `message` otherwise.
//
// Attribution: a cell judges the client, so it fails only where the client misbehaves
// on an answer that is itself conformant. When the server's wire answer is itself a
// breach (the "400" cell's invalid request answered 404, the "401" cell's unknown key
// answered 200, a 5xx, a stream of cumulative snapshots that any client assembles
// garbled, a stream without a content delta, a model list without the configured
// models), the wire clause fails in its own test and the cell is `inconclusive`, naming
// that clause. A breach of an error body alone (text/plain, a string "error", a numeric
// code: ERR-1, judged on every response) explains only a client that failed: a client
// that raised its typed error for the status (with the server's error.message where the
// body had one) and did not retry passes, with a note naming the breach it tolerated. A client library that does
// not load is an `error` (the environment), unless it cannot run on this Node (`skip`).
// An exception our own code threw on the way (the Wire, the guarded fetch, the driver)
// is an `error` too, whatever the library made of it (harness/clients/faults.ts): only
// the library's own outcomes judge the cell.
import { isServerError } from '../../lib/spec/rules/status.ts';
import { describe } from 'vitest';
import { clause, HarnessError, type ClauseContext } from '../clause-test.ts';
import { brainId, config, keys, models } from '../target.ts';
import { THROTTLE_ALLOWANCE_MS } from '../../lib/run/back-off.ts';
import { runGovernor } from '../../lib/run/governor.ts';
import { describeCause, Wire, type WireRequest } from './fetch.ts';
import { extraHeaders } from '../../lib/http/extra-headers.ts';
import { describeFault, thrownByOurCode } from './faults.ts';
import { usageText, type Driver, type Reply, type Setup } from './driver.ts';
import { describeSnapshots } from '../../lib/spec/cumulative-deltas.ts';
import { describeRamp, ramp, type RampOptions } from '../rate-ramp.ts';
import { clauseFor, clientById, operationsOf, unavailable, type ClientEntry, type ErrorStatus, type Operation } from './registry.ts';

const loaded = new Map<string, Promise<Driver>>();

/**
 * The client's driver; a skip when it cannot run on this Node (a documented requirement,
 * e.g. openai 7 needs Node 22). A library that fails to load otherwise (missing, broken
 * install) is a harness error: thrown, it becomes the cell's `error` verdict.
 */
async function driverFor(t: ClauseContext, entry: ClientEntry): Promise<Driver> {
  const why = unavailable(entry);
  if (why) t.skip(why);
  let p = loaded.get(entry.id);
  if (!p) loaded.set(entry.id, p = entry.load());
  try {
    return await p;
  } catch (err) {
    throw new HarnessError(`${entry.id} could not be loaded (${describeCause(err)}); npm ci installs it`);
  }
}

/** The wire clause a server breaks when an error cell's request gets another answer. */
const WIRE_CLAUSE: Record<ErrorStatus, string> = { 400: 'CHAT-2', 401: 'AUTH-2', 403: 'AUTH-6', 429: 'LIM-1' };

/**
 * Why the server's answer on the wire is itself nonconformant, so that the cell cannot
 * judge the client (undefined: the answers were conformant). `status`: the status the
 * error cell's request must get; undefined for a call that should succeed, where only a
 * 5xx is the server's own breach (a 4xx to what a client sends is the client's problem
 * to meet, and SVC-4's). `bodies` false: the statuses only, not the error bodies.
 */
function wireBreach(w: Wire, status?: ErrorStatus, bodies = true): string | undefined {
  for (const r of w.requests) {
    if (r.status === undefined || (r.status === 429 && status !== 429)) continue;
    if (status === undefined) {
      if (r.status === 503) return 'the server answered 503 (overloaded): no verdict on the client';
      if (isServerError(r.status)) return `the server answered ${r.status}: see ERR-2`;
      continue;
    }
    if (r.status !== status) return `the server answered ${r.status}, not ${status}: see ${WIRE_CLAUSE[status]}${isServerError(r.status) ? ' and ERR-2' : ''}`;
    if (bodies && r.errorBodyProblems?.length) return `the server's ${status} carries no proper error body (${r.errorBodyProblems[0]}): see ${status === 429 ? 'LIM-1 and ' : ''}ERR-1`;
  }
  return undefined;
}

function setup(wire: Wire, apiKey: string, maxRetries: number | undefined): Setup {
  // The client's own timeout allows for the wait for the run's governor and 429
  // back-off inside our fetch; each exchange's own deadline (TIMEOUT_MS) starts when it is sent.
  return { baseURL: config.targetUrl!, apiKey, fetch: wire.fetch, timeoutMs: config.timeoutMs + THROTTLE_ALLOWANCE_MS, maxRetries, headers: extraHeaders() };
}

/**
 * A fault of our own code in a call (the wire or the guarded fetch recorded one, or the
 * error the call raised was created by our code, e.g. the driver): a harness error,
 * thrown before the cell can judge the client on it.
 */
function harnessFault(entry: ClientEntry, wires: Wire[], err?: unknown): void {
  const fault = wires.flatMap((w) => w.faults)[0];
  if (fault) throw new HarnessError(`harness error in the fetch ${entry.id} was given (not a verdict on the target or the client): ${fault}`);
  if (err !== undefined && thrownByOurCode(err)) throw new HarnessError(`harness error in the ${entry.id} driver (not a verdict on the target or the client): ${describeFault(err)}`);
}

/** What the report shows of a call: its curl (if the cell fails), throttling met on the way; once its exchanges are logged. */
async function account(t: ClauseContext, entry: ClientEntry, ...wires: Wire[]): Promise<void> {
  await Promise.all(wires.map((w) => w.settled()));
  harnessFault(entry, wires);
  const curl = wires.at(-1)?.curl();
  if (curl) t.reproduce(curl);
  const throttled = wires.reduce((n, w) => n + w.throttled, 0);
  if (throttled) t.note(`rate-limited on the way: ${throttled} x 429, retried after the advertised wait`);
  const waited = wires.reduce((n, w) => n + w.throttleWaitMs, 0);
  if (waited >= 1000) t.note(`waited ${(waited / 1000).toFixed(1)} s for the run's governor (pacing for the target's rate limit)`);
  for (const w of wires) if (w.throttledOut) t.throttledOut('a request of the client library');
}

function raisedText(d: Driver, err: unknown, wire?: Wire): string {
  const e = d.describe(err);
  const transport = wire?.requests.at(-1)?.transportError;
  return `${e.kind}${e.status ? ` (HTTP ${e.status})` : ''}: ${e.message}${transport && !e.message.includes(transport) ? ` [wire: ${transport}]` : ''}`;
}

/** Runs one call that should succeed; a raised error fails the cell with the client's own words. */
async function succeeds<T>(t: ClauseContext, entry: ClientEntry, d: Driver, wire: Wire, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    await wire.settled();
    harnessFault(entry, [wire], err);
    const breach = wireBreach(wire);
    if (breach) t.inconclusive(`${breach} (the client raised ${raisedText(d, err, wire)})`);
    t.fail(`${what} to succeed`, raisedText(d, err, wire));
  } finally {
    await account(t, entry, wire);
  }
}

/**
 * A stream whose deltas were cumulative snapshots (EV-12) makes every client assemble a
 * garbled reply: that is the server's breach, not the client's, so the cell cannot judge
 * the client (the wire clause fails in its own test).
 */
function snapshotBreach(t: ClauseContext, w: Wire, r: Reply): void {
  const found = w.requests.find((q) => q.snapshots)?.snapshots;
  if (found) t.inconclusive(`the server's stream sent the reply so far in every delta (${describeSnapshots(found)}): see EV-12 (the client assembled ${JSON.stringify(String(r.text ?? '').slice(0, 80))})`);
}

/**
 * An empty reply the server itself sent (a stream without a content delta: EV-4's breach;
 * a completion whose content is "") leaves the cell nothing to judge of the client's
 * reading: the client that hands back "" carried what it got.
 */
function emptyReplyOnWire(t: ClauseContext, w: Wire, r: Reply): void {
  if (typeof r.text === 'string' && r.text.length > 0) return;
  const answered = w.requests.filter((q) => q.status !== undefined && q.status < 300);
  const last = answered.at(-1);
  if (!last) return;
  if (last.contentDeltas === 0) t.inconclusive(`the server's stream carried no content delta: see EV-4 (the client assembled ${JSON.stringify(r.text ?? null)})`);
  if (last.replyContent === '') t.inconclusive(`the server's completion carried empty content (choices[0].message.content ""), so the client had no text to return`);
}

function describeReply(r: Reply): string {
  return [`${r.text.length} characters`, `finish reason ${JSON.stringify(r.finishReason ?? null)}`, usageText(r.usage), ...(r.remarks ?? [])].join(', ');
}

function checkText(t: ClauseContext, r: Reply, what: string): void {
  const seen = typeof r.text !== 'string' ? `${r.text === undefined ? 'no text' : `${typeof r.text} ${JSON.stringify(r.text).slice(0, 160)}`} (the client raised no error)`
    : `"" (the client raised no error${r.remarks?.length ? `; ${r.remarks.join('; ')}` : ''})`;
  t.check(typeof r.text === 'string' && r.text.length > 0, what, seen);
}

const isClientError = (r: WireRequest) => r.status !== undefined && r.status >= 400 && r.status < 500;

const wire = () => new Wire({ timeoutMs: config.timeoutMs, retry429: true, gate: runGovernor() });
const mainKey = () => config.apiKey!;

/**
 * Judges an error call: the class/tag for the status, the server's message carried, no
 * retry of a 4xx. A wire breach may explain a client that did not work (inconclusive,
 * naming the wire clause); a breach of the error body alone never takes away a pass the
 * client earned: a client that worked passes, with a note naming the clause it tolerated.
 */
function judgeError(t: ClauseContext, entry: ClientEntry, d: Driver, w: Wire, status: ErrorStatus, outcome: { ok: true } | { ok: false; err: unknown }): void {
  const expected = entry.raises[status];
  const breach = wireBreach(w, status);
  const undecided = (): never => t.inconclusive(`${breach} (${outcome.ok ? 'the call succeeded' : `the client raised ${raisedText(d, (outcome as { err: unknown }).err, w)}`})`);
  // A wrong status (or none) decides the cell whatever the client did.
  if (breach && (outcome.ok || wireBreach(w, status, false))) undecided();
  if (outcome.ok) t.fail(`${expected} for HTTP ${status}`, `the call succeeded (HTTP ${w.statuses()})`);
  const err = (outcome as { err: unknown }).err;
  const text = raisedText(d, err, w);
  const lost = w.requests.find((r) => !isClientError(r));
  if (lost) {
    if (breach) undecided();
    const what = lost.transportError ? `no response (${lost.transportError})`
      : lost.status! < 400 ? `HTTP ${lost.status} (the request was accepted)` : `HTTP ${lost.status}${lost.serverMessage ? ` (${lost.serverMessage})` : ''}`;
    t.fail(`${expected} for HTTP ${status}`, `${what} on the wire, where the call was cut short (the client raised ${text})`);
  }
  const server = w.serverMessage(status);
  // A body that broke its wire clause (text/plain, a string "error") may hold no
  // error.message: nothing to carry, so the typed error and the request count judge the client.
  const nothingToCarry = !!breach && server === undefined;
  const checks: Array<[boolean, string, string]> = [
    [d.raisedFor(err, status), `${expected} for HTTP ${status}`, `${text} (HTTP ${w.statuses()} on the wire)`],
  ];
  if (!nothingToCarry) {
    checks.push([server !== undefined, `an HTTP ${status} error body whose error.message the client can carry`, `no error.message in the body; the client raised ${text}`]);
    checks.push([server !== undefined && d.describe(err).message.includes(server), `the server's error.message ${JSON.stringify(server)} in the client's error`, text]);
  }
  if (status !== 429) checks.push([w.retriesAfterClientError().length === 0, `one request (no retry of HTTP ${status})`, `${w.requests.length} requests: HTTP ${w.statuses()}`]);
  if (breach) {
    if (checks.some(([ok]) => !ok)) undecided();
    t.note(`the client worked despite the server's breach: ${breach}${nothingToCarry ? '; it raised its typed error for the status, and the body held no error.message to carry' : ''}`);
  }
  for (const [ok, what, seen] of checks) t.check(ok, what, seen);
  t.observe(text);
}

async function errorCell(t: ClauseContext, entry: ClientEntry, status: Exclude<ErrorStatus, 429>, apiKey: string, call: (d: Driver, s: Setup) => Promise<unknown>): Promise<void> {
  const d = await driverFor(t, entry);
  // Anything but a 4xx (a 2xx, a 5xx, no response) decides the cell at once, and the
  // client might retry it with back-off (LangChain: 6 times, about a minute): cut it short.
  const cut = new AbortController();
  const w = new Wire({ timeoutMs: config.timeoutMs, retry429: true, gate: runGovernor(), onOutcome: (r) => { if (!isClientError(r)) cut.abort(); } });
  // The client's default retry policy, as its users run it: the cell checks it does not retry this 4xx.
  let outcome: { ok: true } | { ok: false; err: unknown };
  try { await call(d, { ...setup(w, apiKey, undefined), signal: cut.signal }); outcome = { ok: true }; } catch (err) { outcome = { ok: false, err }; }
  await account(t, entry, w);
  if (!outcome.ok) harnessFault(entry, [w], outcome.err);
  judgeError(t, entry, d, w, status, outcome);
}

const TITLES: Record<Exclude<Operation, 'error-429'>, (e: ClientEntry) => string> = {
  models: (e) => `${e.calls.models} lists the configured models`,
  completion: (e) => `${e.calls.completion} returns the reply text`,
  stream: (e) => `${e.calls.stream} assembles the streamed reply, with finish reason "stop" (and usage where the client reports it)`,
  brain: (e) => `${e.calls.completion} with model "brain:<uuid>" returns a reply`,
  'error-400': (e) => `an invalid request (model null) raises ${e.raises[400]} carrying the server's message, without retries`,
  'error-401': (e) => `an unknown key raises ${e.raises[401]} carrying the server's message, without retries`,
  'error-403': (e) => `a key without brains:invoke on a brain raises ${e.raises[403]} carrying the server's message, without retries`,
};

const CELLS: Record<Exclude<Operation, 'error-429'>, (t: ClauseContext, e: ClientEntry) => Promise<void>> = {
  async models(t, entry) {
    const d = await driverFor(t, entry);
    const w = wire();
    const ids = await succeeds(t, entry, d, w, entry.calls.models!, () => d.listModels!(setup(w, mainKey(), 0)));
    // A model the server's own list lacks is RES-MOD-1's breach: the client listed what it got.
    const listed = w.requests.find((q) => q.listedIds)?.listedIds;
    const unlisted = models.filter((m) => !ids.includes(m) && listed && !listed.includes(m));
    if (unlisted.length) t.inconclusive(`the server's GET /models does not list ${unlisted.map((m) => `"${m}"`).join(', ')} (${listed!.length} entries): see RES-MOD-1 (the client listed ${JSON.stringify(ids).slice(0, 160)})`);
    for (const m of models) t.check(ids.includes(m), `"${m}" in ${entry.calls.models}`, JSON.stringify(ids).slice(0, 200));
    t.observe(`${ids.length} models: ${ids.join(', ')}`.slice(0, 300));
  },

  async completion(t, entry) {
    const d = await driverFor(t, entry);
    const w = wire();
    const r = await succeeds(t, entry, d, w, entry.calls.completion, () => d.complete(setup(w, mainKey(), 0), models[0]!));
    emptyReplyOnWire(t, w, r);
    checkText(t, r, 'the reply text');
    t.observe(describeReply(r));
  },

  async stream(t, entry) {
    const d = await driverFor(t, entry);
    const first = wire();
    let r: Reply;
    try {
      r = await d.stream(setup(first, mainKey(), 0), models[0]!, { usage: true });
      await account(t, entry, first);
    } catch (err) {
      await account(t, entry, first);
      harnessFault(entry, [first], err);
      const breach = wireBreach(first);
      if (breach) t.inconclusive(`${breach} (the client raised ${raisedText(d, err, first)})`);
      // CHAT-8 lets a target refuse stream_options with 400; where asking for usage is the
      // user's choice, the stream itself must still work without it.
      if (!d.usageOptIn || d.describe(err).status !== 400) t.fail(`${entry.calls.stream} to succeed`, raisedText(d, err, first));
      t.note(`asking for stream usage was refused with ${raisedText(d, err, first)}; streamed without it (LangChain asks on every stream)`);
      const second = wire();
      r = await succeeds(t, entry, d, second, entry.calls.stream, () => d.stream(setup(second, mainKey(), 0), models[0]!, { usage: false }));
      snapshotBreach(t, second, r);
      emptyReplyOnWire(t, second, r);
    }
    snapshotBreach(t, first, r);
    emptyReplyOnWire(t, first, r);
    checkText(t, r, 'the streamed reply text');
    t.check(r.finishReason === 'stop', 'finish reason "stop"', `${JSON.stringify(r.finishReason ?? null)} (${describeReply(r)})`);
    t.observe(describeReply(r));
  },

  async brain(t, entry) {
    if (!brainId) t.skip('BRAIN_ID is not set');
    const d = await driverFor(t, entry);
    const w = wire();
    const r = await succeeds(t, entry, d, w, `${entry.calls.completion} with a brain`, () => d.complete(setup(w, mainKey(), 0), `brain:${brainId}`));
    emptyReplyOnWire(t, w, r);
    checkText(t, r, 'the brain\'s reply text');
    t.observe(describeReply(r));
  },

  'error-400': (t, entry) => errorCell(t, entry, 400, mainKey(), (d, s) => d.invalid(s, models[0]!)),
  'error-401': (t, entry) => errorCell(t, entry, 401, (keys.unknown as { key: string }).key, (d, s) => d.complete(s, models[0]!)),
  async 'error-403'(t, entry) {
    if (!config.limitedApiKey) t.skip('LIMITED_API_KEY is not set');
    if (!brainId) t.skip('BRAIN_ID is not set');
    await errorCell(t, entry, 403, config.limitedApiKey!, (d, s) => d.complete(s, `brain:${brainId}`));
  },
};

/** Registers the matrix cells of one client (all but error-429, which suites/limits.test.ts owns). */
export function clientSuite(id: string): void {
  clientSuiteOf(clientById(id));
}

/** clientSuite() for an entry given whole (the self-tests' clients: one that fails to load, ones with faults built in); `only` limits the cells. */
export function clientSuiteOf(entry: ClientEntry, only?: Operation[]): void {
  const clauseId = clauseFor(entry);
  describe(`${clauseId}: ${entry.id}`, () => {
    for (const op of operationsOf(entry)) {
      if (op === 'error-429' || (only && !only.includes(op))) continue;
      clause(`clients/${entry.id}/${op}`, clauseId, `${entry.id} ${op}: ${TITLES[op](entry)}`, (t) => CELLS[op](t, entry), {
        matrix: { client: entry.id, operation: op },
        // A refused usage request is followed by a second stream.
        requests: op === 'stream' ? 2 : 1,
      });
    }
  });
}

export function rateLimitTitle(entry: ClientEntry): string {
  return `${entry.id} error-429: past the rate limit the client raises ${entry.raises[429]} carrying the server's message`;
}

/** Where the LIM probe met its first 429: the cell's ramp starts at that rate. */
export interface RateLimitStart {
  /** The offered rate the probe's first 429 went out at, per second. */
  rate: number;
  /** Most calls the cell makes. */
  max: number;
}

/**
 * The error-429 cell: calls on RATE_LIMIT_API_KEY (client retries off, so the 429 reaches
 * the caller) on the LIM probe's open-loop rising schedule (harness/rate-ramp.ts), from
 * the rate at which the probe met its first 429, until one is throttled: at most
 * `start.max` calls. Run only after the LIM probe is over, and only when the probe met a
 * 429 at all (suites/limits.test.ts sees to both).
 */
export async function rateLimitCell(t: ClauseContext, entry: ClientEntry, start: RateLimitStart, schedule: Omit<RampOptions, 'max' | 'startRate'>): Promise<void> {
  const d = await driverFor(t, entry);
  const key = config.rateLimitApiKey ?? config.apiKey!;
  type Call = { wire: Wire; result: PromiseSettledResult<unknown> };
  const throttled = (c: Call) => c.result.status === 'rejected' && c.wire.requests.some((q) => q.status === 429);
  // Calls that met only pooled connections the server had closed while the client sat idle
  // are followed by new connections; 20 silent in a row will not find the limit (LIM-1 judges the target).
  let silentRun = 0;
  const silent = (c: Call) => {
    silentRun = c.wire.requests.at(-1)?.transportError && c.wire.requests.every((q) => q.status === undefined) ? silentRun + 1 : 0;
    return silentRun >= 20;
  };
  // Unpaced calls: the ramp keeps out of the quiet sections (SVC-9's lone requests, SVC-10).
  const vacate = await runGovernor().occupy();
  const r = await ramp<Call>(async () => {
    const wire = new Wire({ timeoutMs: config.timeoutMs, retry429: false });
    const result = await d.complete(setup(wire, key, 0), models[0]!).then((value) => ({ status: 'fulfilled' as const, value }), (reason: unknown) => ({ status: 'rejected' as const, reason }));
    return { wire, result };
  }, (c) => throttled(c) || silent(c), { ...schedule, startRate: start.rate, max: start.max }).finally(vacate);
  const calls = r.answers.map((a) => a.value);
  await Promise.all(calls.map((c) => c.wire.settled()));
  harnessFault(entry, calls.map((c) => c.wire));
  for (const c of calls) if (c.result.status === 'rejected') harnessFault(entry, [], c.result.reason);
  const hit = r.answers.find((a) => throttled(a.value));
  if (hit) {
    const { wire: w, result } = hit.value;
    await account(t, entry, w);
    judgeError(t, entry, d, w, 429, { ok: false, err: (result as PromiseRejectedResult).reason });
    t.observe(`first 429 at call ${hit.index + 1} of ${r.sent} through ${entry.id}, sent at an offered ${hit.rate} calls per second`);
    return;
  }
  const lastSilent = calls.filter((c) => c.wire.requests.at(-1)?.transportError).at(-1);
  if (silentRun >= 20) t.inconclusive(`no 429: ${silentRun} calls in a row through ${entry.id} got no response (${lastSilent!.wire.requests.at(-1)!.transportError})`);
  t.inconclusive(`no 429 within ${r.sent} calls through ${entry.id} in ${(r.elapsedMs / 1000).toFixed(1)} s, ${describeRamp(r)}`);
}
