// The load driver's pool (load/engine/load-driver.ts createPool): undici's Pool with free
// connections kept on a stack. It must never open more connections than allowed,
// must serve every request it queued when all were busy (also when the next request
// is sent from the previous one's completion, as the closed loop does), must let
// close() wait for them, and must not fall back to Pool's walk of every connection
// to find a free one (it did, on most requests of a closed loop at 10,000 streams:
// docs/LOAD.md). Cost: well under a second.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../load/engine/load-driver.ts';

const require = createRequire(import.meta.url);
const { kGetDispatcher } = require('undici/lib/dispatcher/pool-base.js') as { kGetDispatcher: symbol };

let server: http.Server;
let origin = '';
/** Connections opened since the test began (keep-alive: each is reused, none is replaced). */
let opened = 0;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    // Each answer takes a few ms, so requests overlap and some have to wait.
    req.on('end', () => setTimeout(() => res.end(req.url), 5));
  });
  server.on('connection', () => opened++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }));

describe('load driver pool', () => {
  it('is the stack pool, not plain Pool (undici internals found)', () => {
    const pool = createPool(origin, 3, 5_000);
    expect(pool).toBeInstanceOf(Pool);
    expect(pool.constructor).not.toBe(Pool);
    void pool.close();
  });

  it('serves 30 requests on 3 connections, queueing the rest, without walking the connections', async () => {
    opened = 0;
    const pool = createPool(origin, 3, 5_000);
    const proto = Pool.prototype as unknown as Record<symbol, (...a: unknown[]) => unknown>;
    const original = proto[kGetDispatcher]!;
    let walks = 0;
    proto[kGetDispatcher] = function (this: unknown, ...a: unknown[]) {
      walks++;
      return original.apply(this, a);
    };
    try {
      const bodies = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
        const r = await pool.request({ path: `/${i}`, method: 'GET' });
        return r.body.text();
      }));
      expect(bodies).toEqual(Array.from({ length: 30 }, (_, i) => `/${i}`));
    } finally {
      proto[kGetDispatcher] = original;
    }
    expect(opened).toBeLessThanOrEqual(3);
    expect(walks).toBe(0);
    await pool.close();
  });

  it('serves a closed loop that sends the next request from the last one\'s completion', async () => {
    opened = 0;
    const pool = createPool(origin, 2, 5_000);
    let done = 0;
    await new Promise<void>((resolve, reject) => {
      const worker = (left: number) => {
        pool.request({ path: '/loop', method: 'GET' }).then((r) => r.body.text()).then(() => {
          done++;
          if (left > 1) setImmediate(() => worker(left - 1)); // as load/engine/load-driver.ts's closed loop
          else if (done === 20) resolve();
        }, reject);
      };
      worker(10);
      worker(10);
    });
    expect(done).toBe(20);
    expect(opened).toBeLessThanOrEqual(2);
    await pool.close();
  });

  it('close() waits for the requests it queued', async () => {
    const pool = createPool(origin, 1, 5_000);
    const answers = Array.from({ length: 4 }, (_, i) => pool.request({ path: `/q${i}`, method: 'GET' }).then((r) => r.body.text()));
    await pool.close();
    expect(await Promise.all(answers)).toEqual(['/q0', '/q1', '/q2', '/q3']);
  });
});
