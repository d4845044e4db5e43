// The run's one governor (lib/run/governor.ts), held by the runner process and asked by
// every test worker over a Unix socket in the run directory. vitest runs suite files
// in several workers; the target's rate limit is one budget for all of them, so the
// pace must be decided in one place. A worker that goes away gives back the turns it
// still held, so a crashed worker cannot starve the others.
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Governor, GOVERNOR_SOCKET_ENV, type GovernorStats, type Lease } from '../lib/run/governor.ts';

export interface GovernorServer {
  /** Socket path; the workers find it in CHATGATE_GOVERNOR_SOCKET. */
  path: string;
  stats(): GovernorStats;
  close(): Promise<void>;
}

export async function startGovernorServer(runDir: string): Promise<GovernorServer> {
  const governor = new Governor();
  const path = join(runDir, 'governor.sock');
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.setEncoding('utf8');
    const leases = new Map<number, Lease>();
    const holds = new Map<number, () => void>();
    const sections = new Map<number, () => void>();
    const occupancies = new Map<number, () => void>();
    let buffer = '';
    const reply = (msg: unknown) => { if (!socket.destroyed) socket.write(JSON.stringify(msg) + '\n'); };
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        let msg: { op?: string; id?: number; ref?: number; maxWaitMs?: number; retry?: boolean; maxMs?: number; drainMs?: number; section?: number; status?: number | null; headers?: Record<string, string> };
        try { msg = JSON.parse(line); } catch { continue; }
        const { op, id, ref } = msg;
        if (op === 'acquire' && typeof id === 'number') {
          void governor.acquireIn(typeof msg.section === 'number' ? msg.section : undefined, Number(msg.maxWaitMs ?? 0), msg.retry === true).then((lease) => {
            if (socket.destroyed) { lease.release({ headers: {} }); return; }
            leases.set(id, lease);
            reply({ id, waitedMs: lease.waitedMs, forced: lease.forced });
          });
        } else if (op === 'release' && typeof ref === 'number') {
          leases.get(ref)?.release({ status: msg.status ?? undefined, headers: msg.headers ?? {} });
          leases.delete(ref);
        } else if (op === 'hold' && typeof id === 'number') {
          void governor.hold(Number(msg.maxMs ?? 0)).then((release) => { holds.set(id, release); reply({ id }); });
        } else if (op === 'unhold' && typeof ref === 'number') {
          holds.get(ref)?.();
          holds.delete(ref);
        } else if (op === 'section' && typeof id === 'number') {
          void governor.openSection(Number(msg.drainMs ?? 0), Number(msg.maxMs ?? 0)).then(({ id: section, quiet, close }) => {
            if (socket.destroyed) { close(); return; }
            sections.set(section, close);
            reply({ id, section, quiet });
          });
        } else if (op === 'unsection' && typeof ref === 'number') {
          sections.get(ref)?.();
          sections.delete(ref);
        } else if (op === 'occupy' && typeof id === 'number') {
          void governor.occupy(typeof msg.maxWaitMs === 'number' ? msg.maxWaitMs : Infinity).then((vacate) => {
            if (socket.destroyed) { vacate(); return; }
            occupancies.set(id, vacate);
            reply({ id });
          });
        } else if (op === 'vacate' && typeof ref === 'number') {
          occupancies.get(ref)?.();
          occupancies.delete(ref);
        }
      }
    });
    const gone = () => {
      sockets.delete(socket);
      for (const lease of leases.values()) lease.release({ headers: {} });
      leases.clear();
      for (const release of holds.values()) release();
      holds.clear();
      for (const close of sections.values()) close();
      sections.clear();
      for (const vacate of occupancies.values()) vacate();
      occupancies.clear();
    };
    socket.on('close', gone);
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  server.unref();
  process.env[GOVERNOR_SOCKET_ENV] = path;
  return {
    path,
    stats: () => ({ ...governor.stats }),
    close: () => new Promise<void>((resolve) => {
      delete process.env[GOVERNOR_SOCKET_ENV];
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    }),
  };
}
