// Whose fault is an exception met in a client-library test? Only the library's own
// documented outcomes (a typed API error, a failure to parse what the server sent, a
// connection failure or a deadline) judge a client cell. An exception our own code
// threw on the way (the Wire, the guarded fetch, the driver) says nothing about the
// target or the client: the cell is an `error` (harness/clients/suite.ts).
//
// Two ways to know: the Wire records any exception of its own code (a library wraps it
// in its connection error, so the error the cell sees is the library's), and an error
// created in our own source files (the driver) is recognised by where it was created.
import { fileURLToPath } from 'node:url';

/** Errors that report what the network or the target did (no answer, a deadline, a body past the cap). */
const fromTarget = new WeakSet<object>();

/** Marks an error as the target's or the network's doing (not a fault of our code). */
export function markFromTarget<E>(err: E): E {
  if (err !== null && typeof err === 'object') fromTarget.add(err);
  return err;
}

export function isFromTarget(err: unknown): boolean {
  return err !== null && typeof err === 'object' && fromTarget.has(err);
}

/**
 * What undici's fetch rejects with when the network or the target failed: "fetch failed"
 * (its cause names the socket error), or the abort of a deadline or of the caller's
 * signal. Anything else it throws (an invalid header, an invalid argument) is our
 * process's fault, never the target's.
 */
export function isNetworkFailure(err: unknown): boolean {
  const e = err as Error | undefined;
  return !!e && (e.name === 'AbortError' || e.name === 'TimeoutError' || (e instanceof TypeError && e.message === 'fetch failed'));
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The first frame of an error's stack that is a file (not node internals, not <anonymous>). */
function origin(err: Error): string | undefined {
  for (const line of (err.stack ?? '').split('\n').slice(1)) {
    const m = /(?:\(|^at )((?:file:\/\/)?\/[^():]+):\d+:\d+\)?$/.exec(line.trim());
    if (m) return m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
  }
  return undefined;
}

/** The error was created by our own source (outside node_modules) and is not a report of what the target did. */
export function thrownByOurCode(err: unknown): boolean {
  if (!(err instanceof Error) || isFromTarget(err)) return false;
  const file = origin(err);
  return !!file && file.startsWith(ROOT) && !file.includes('/node_modules/');
}

/** One line for a fault: the error and where our code threw it. */
export function describeFault(err: unknown): string {
  const e = err as Error | undefined;
  const where = e instanceof Error ? origin(e) : undefined;
  return `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}${where ? ` (at ${where.startsWith(ROOT) ? where.slice(ROOT.length) : where})` : ''}`;
}
