// Stryker disable all: [not-api] rehearsal control
// Run-time changes of the engine model, for rehearsing a capacity change under load
// (docs/LOAD.md, "Rehearsing a change"): its slots drop to N for S seconds (a
// scale-down or a lost replica), or it restarts (every connection cut, new ones
// refused for S seconds, then a fresh engine). Driven over a control port of its own on
// 127.0.0.1, never under the API's base URL:
//   POST /engine/slots?n=4&seconds=15   POST /engine/restart?down_seconds=5   GET /engine
import http from 'node:http';
import type { Socket, AddressInfo } from 'node:net';
import { EngineModel } from './engine-model.ts';
import type { ServerState } from './state.ts';

/** What the control port can reach: the API server, its open sockets, its port. */
export interface ControlledServer {
  server: http.Server;
  sockets: Set<Socket>;
  port: number;
}

export interface EngineControl {
  /** http://127.0.0.1:PORT (no /v1: outside the API). */
  url: string;
  /** Slots to N for `seconds`; while they are lowered, a request that finds N already waiting is shed with a 503. */
  scaleDown(n: number, seconds: number): void;
  /** Cuts every connection, refuses new ones for `downSeconds`, then serves again with a fresh engine. */
  restart(downSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/** Whether the engine sheds this request (a 503 with an error body): only while a scale-down lowers its slots. */
export function engineSheds(state: ServerState): boolean {
  const c = state.engineChange;
  if (!c || c.slots === undefined || !state.engine) return false;
  const { waiting, slotsUsed } = state.engine.model.stats();
  // A queue as deep as the slots left: beyond it a client is better told to retry than kept waiting.
  return slotsUsed >= c.slots && waiting >= c.slots;
}

export async function startEngineControl(state: ServerState, target: ControlledServer): Promise<EngineControl> {
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  state.engineChange = {};
  const scaleDown = (n: number, seconds: number): void => {
    state.engineChange!.slots = n;
    state.engine!.model.setSlots(n);
    const until = Date.now() + seconds * 1000;
    state.engineChange!.slotsUntil = until;
    later(seconds * 1000, () => {
      if (state.engineChange!.slotsUntil !== until) return; // a later change took over
      state.engineChange!.slots = undefined;
      state.engine!.model.setSlots(undefined);
    });
  };
  const restart = async (downSeconds: number): Promise<void> => {
    const { server, sockets, port } = target;
    state.engineChange!.slots = undefined;
    state.engineChange!.slotsUntil = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const abort of [...state.live]) abort();
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
    });
    const old = state.engine!.model;
    old.close();
    state.engine!.model = new EngineModel(old.opts);
    await new Promise<void>((resolve) => later(downSeconds * 1000, resolve));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port, host: '127.0.0.1', backlog: 2048 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
  };
  const control = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const answer = (status: number, body: Record<string, unknown>) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(`${JSON.stringify(body)}\n`);
    };
    const num = (name: string, min: number): number | undefined => {
      const raw = url.searchParams.get(name);
      const v = raw === null ? NaN : Number(raw);
      return Number.isFinite(v) && v >= min ? v : undefined;
    };
    if (req.method === 'GET' && url.pathname === '/engine') return answer(200, { ...state.engine!.model.stats(), slots: state.engineChange!.slots ?? state.engine!.model.opts.maxBatch });
    if (req.method === 'POST' && url.pathname === '/engine/slots') {
      const n = num('n', 1);
      const seconds = num('seconds', 0.001);
      if (n === undefined || !Number.isInteger(n) || seconds === undefined) return answer(400, { error: 'give n=<slots, integer >= 1> and seconds=<how long, > 0>' });
      scaleDown(n, seconds);
      return answer(200, { change: 'slots', n, seconds });
    }
    if (req.method === 'POST' && url.pathname === '/engine/restart') {
      const down = num('down_seconds', 0);
      if (down === undefined) return answer(400, { error: 'give down_seconds=<seconds refusing connections, >= 0>' });
      // Answered before the cut: the caller learns the restart began, not when it ended.
      answer(200, { change: 'restart', down_seconds: down });
      res.once('finish', () => { restart(down).catch((e: unknown) => console.error('[reference] restart failed:', e)); });
      return;
    }
    answer(404, { error: 'GET /engine, POST /engine/slots?n=&seconds=, POST /engine/restart?down_seconds=' });
  });
  await new Promise<void>((resolve) => control.listen({ port: 0, host: '127.0.0.1' }, resolve));
  const { port } = control.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    scaleDown,
    restart,
    close: () => new Promise<void>((resolve) => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      control.close(() => resolve());
      control.closeAllConnections();
    }),
  };
}
