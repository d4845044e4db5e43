// Each client driver against the reference server, in process: the driver does what
// the client's users do, reports what the client returned, and tells the error a
// client raises for one status from the error it raises for another. If a driver
// drifted (a client upgrade changed an API), the matrix would judge the driver, not
// the target; these tests say which driver and which call.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReferenceServer } from '../../reference/server.ts';
import { CLIENTS, unavailable } from '../../harness/clients/registry.ts';
import { Wire } from '../../harness/clients/fetch.ts';
import type { Driver, Setup } from '../../harness/clients/driver.ts';

type Ref = Awaited<ReturnType<typeof startReferenceServer>>;
let ref: Ref;
let named: Ref;

beforeAll(async () => {
  [ref, named] = await Promise.all([startReferenceServer({ port: 0 }), startReferenceServer({ port: 0, variants: ['sse-named-event'] })]);
});
afterAll(async () => { await Promise.all([ref?.close(), named?.close()]); });

function setup(target: Ref, apiKey: string, maxRetries?: number): { wire: Wire; s: Setup } {
  const wire = new Wire({ timeoutMs: 5000, retry429: false });
  return { wire, s: { baseURL: target.url, apiKey, fetch: wire.fetch, timeoutMs: 5000, maxRetries } };
}

async function raised(call: Promise<unknown>): Promise<unknown> {
  try { await call; } catch (err) { return err; }
  throw new Error('the call succeeded');
}

for (const entry of CLIENTS) {
  describe.skipIf(unavailable(entry) !== undefined)(`driver ${entry.id}`, () => {
    let d: Driver;
    beforeAll(async () => { d = await entry.load(); });

    it('names the installed package and version', () => {
      expect(d.packages).toMatch(/\d+\.\d+\.\d+/);
    });

    it('completes, and reports text, finish reason and usage', async () => {
      const r = await d.complete(setup(ref, ref.keys.main, 0).s, 'svc');
      expect(r.text.length).toBeGreaterThan(0);
      expect(r.finishReason).toBe('stop');
      expect(r.usage?.total).toBeGreaterThan(0);
    });

    it('assembles a stream with its finish reason and usage, in one request', async () => {
      const { wire, s } = setup(ref, ref.keys.main, 0);
      const r = await d.stream(s, 'svc', { usage: true });
      expect(r.text.length).toBeGreaterThan(0);
      expect(r.finishReason).toBe('stop');
      expect(r.usage?.completion).toBeGreaterThan(0);
      expect(wire.requests).toHaveLength(1);
      expect(wire.requests[0]!.body).toContain('include_usage');
    });

    it.skipIf(!entry.calls.models)('lists models', async () => {
      expect(await d.listModels!(setup(ref, ref.keys.main, 0).s)).toEqual(expect.arrayContaining(ref.models));
    });

    it('raises the error of each status, carrying the server message, with one request', async () => {
      const cases = [
        [400, ref.keys.main, (s: Setup) => d.invalid(s, 'svc')],
        [401, 'sk-never-issued-00000000000000000000', (s: Setup) => d.complete(s, 'svc')],
        [403, ref.keys.limited, (s: Setup) => d.complete(s, `brain:${ref.brainId}`)],
      ] as const;
      for (const [status, key, call] of cases) {
        const { wire, s } = setup(ref, key); // the client's default retries: none for these
        const err = await raised(call(s));
        expect(d.raisedFor(err, status), `${status}: ${JSON.stringify(d.describe(err))}`).toBe(true);
        for (const other of [400, 401, 403, 429].filter((x) => x !== status)) expect(d.raisedFor(err, other), `${status} taken for ${other}`).toBe(false);
        expect(d.describe(err).message).toContain(wire.serverMessage(status)!);
        expect(wire.requests, `${status}`).toHaveLength(1);
      }
    });

    it(entry.id === 'openai@4' ? 'loses every chunk of a stream with named SSE events (client-facts)' : 'streams through named SSE events', async () => {
      const r = await d.stream(setup(named, named.keys.main, 0).s, 'svc', { usage: false });
      if (entry.id === 'openai@4') {
        expect(r.text).toBe('');
        expect(r.remarks?.join()).toMatch(/named SSE events/);
      } else {
        expect(r.text.length).toBeGreaterThan(0);
      }
    });
  });
}
