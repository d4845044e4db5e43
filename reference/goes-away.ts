// target-dies-mid-run: the server goes away as a process that runs out of memory does.
// After serving a number of requests it stops listening and drops every connection,
// the one of the request that arrives included: later requests are refused.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
// Stryker disable all: [gate] target-dies-mid-run SVC-1

/** Requests served before the server goes away (a run of a few suite files sends more). */
export const SERVED_BEFORE_DYING = 40;

/** Whether this request finds the server gone (then it is gone: no listener, no connection). */
export function goesAway(served: number, server: Server, sockets: Set<Socket>): boolean {
  if (served <= SERVED_BEFORE_DYING) return false;
  if (server.listening) server.close();
  for (const s of sockets) s.destroy();
  return true;
}
