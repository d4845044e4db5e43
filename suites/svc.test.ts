// SVC: what the service does (spec: "What the service does").
import { describe } from 'vitest';
import { clause } from '../harness/clause-test.ts';
import type { Exchange } from '../lib/http/http-client.ts';
import { success } from '../harness/success.ts';
import { brainChat, brainId, chat, chatBody, http, keys, listModels, send } from '../harness/target.ts';
import type { AuthSpec } from '../lib/http/http-client.ts';
import { aloneForms, burstCrossTalkVerdict, burstVerdict, cancelFreesCapacity, crossRequest, crossTalkBurstVerdict, hasContent, learnAlone, newBurst, recordBurstAnswer, sendCross, type Burst } from '../harness/concurrency-probes.ts';
import { runContext } from '../lib/run/run-context.ts';
import { runGovernor } from '../lib/run/governor.ts';
import { DEFAULT_429_BUDGET } from '../lib/run/back-off.ts';

/** Requests of each round of the burst probe, all in flight at once. */
const BURST = 20;

let burst: Promise<Burst> | undefined;
// SVC-1 and SVC-9 judge one burst; a mutation run (tests one at a time) gives each test its own.
function runBurst(): Promise<Burst> {
  return runContext().mode.mutation ? burstOnce() : (burst ??= burstOnce());
}
async function burstOnce(): Promise<Burst> {
  const b = newBurst();
  // Ten prompt lengths (4 to 148 words): far enough apart for usage, short enough that the burst stays cheap.
  const one = async (k: number) => recordBurstAnswer(b, await sendCross(crossRequest(k % 10, false, 'main', keys.main)), `burst request ${k + 1}`);
  for (let round = 0; round < 2; round++) await Promise.all(Array.from({ length: BURST }, (_, i) => one(round * BURST + i)));
  return b;
}

describe('SVC: what the service does', () => {
  clause('svc/chat', 'SVC-1', 'a chat request with a known model and one user message gets 200 and a completion', async (t) => {
    const ex = await chat();
    t.note('its streaming form is SVC-5');
    t.status(ex, 200);
    const body = t.json(ex) as Record<string, unknown>;
    t.check(body !== null && typeof body === 'object' && !Array.isArray(body), 'a JSON object (a chat completion)', typeof body, ex);
    t.check(Array.isArray(body.choices), 'a chat completion with a choices array', 'no choices array', ex);
  });

  // SVC-2 asks for a list; its shape ({"object": "list", "data": [...]}, ids) is MOD-1's to judge.
  clause('svc/models', 'SVC-2', 'GET /models answers 200 with a list', async (t) => {
    const ex = await listModels();
    t.status(ex, 200);
    const body = t.json(ex) as { data?: unknown } | unknown[] | null;
    const list = Array.isArray(body) ? body : (body as { data?: unknown } | null)?.data;
    t.check(Array.isArray(list), 'a list of models (a data array)', () => `no list: ${JSON.stringify(body)?.slice(0, 120)}`, ex);
  });

  // "Can be invoked": any 2xx on either form (harness/success.ts, the rule BRAIN-1 uses too).
  clause('svc/brains', 'SVC-3', 'a brain answers on POST /brains/{id}/chat and as model "brain:<uuid>"', async (t) => {
    if (!brainId) t.skip('BRAIN_ID is not set');
    success(t, await brainChat(brainId!));
    success(t, await chat(chatBody({ model: `brain:${brainId}` })));
  }, { requests: 2 });

  clause('svc/stream', 'SVC-5', 'stream: true is answered with an event stream', async (t) => {
    const ex = await chat(chatBody({ stream: true }));
    t.status(ex, 200);
    t.mediaType(ex, 'text/event-stream');
    t.check((ex.stream?.events.length ?? 0) > 0, 'at least one server-sent event', 'no event', ex);
  });

  clause('svc/no-media', 'SVC-6', 'neither image nor video generation is served', async (t) => {
    for (const path of ['/images/generations', '/videos']) {
      const ex = await send({ method: 'POST', path, auth: keys.main, json: { model: 'svc', prompt: 'a cat' } });
      t.responded(ex);
      t.check(ex.status! < 200 || ex.status! >= 300, `POST ${path} not to succeed`, `HTTP ${ex.status}`, ex);
    }
  }, { requests: 2 });

  clause('svc/cors-preflight', 'SVC-7', 'CORS preflight from an arbitrary origin asking for Authorization', async (t) => {
    const ex = await send({
      method: 'OPTIONS', path: '/chat/completions', auth: 'none',
      headers: { origin: 'https://chatgate-probe.invalid', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    t.responded(ex);
    const origin = ex.headers['access-control-allow-origin'];
    const allowed = (ex.headers['access-control-allow-headers'] ?? '').toLowerCase();
    const granted = (origin === '*' || origin === 'https://chatgate-probe.invalid') && (allowed.includes('authorization') || allowed.trim() === '*');
    t.observe(`preflight answered HTTP ${ex.status}; ${granted ? 'GRANTED: a browser page on any origin may send the key' : 'not granted'} (allow-origin ${origin ?? 'absent'}, allow-headers ${allowed || 'absent'})`);
  });

  // One connection (undici Client), three requests sent at once one after another. A
  // connection the server leaves open (no Connection: close) must carry the next one;
  // closing it silently makes pooling clients fail or retry their next call. Requests
  // elsewhere in the run that met such a close are re-sent once by the raw client and
  // recorded as SVC-8 evidence on the exchange (reuseRetryEvidence, lib/spec/rules/connection-reuse.ts).
  clause('svc/connection-reuse', 'SVC-8', 'one connection carries a stream, then a plain request, then GET /models', async (t) => {
    // Through a forward proxy the one connection we could count is the tunnel, opened by
    // the proxy's agent: not the probe this clause needs.
    if (http.viaProxy) t.inconclusive('requests go through a forward proxy (HTTPS_PROXY/HTTP_PROXY); set NO_PROXY for the target to probe its connections directly');
    const conn = http.singleConnection();
    let connects = 0;
    let after = -1; // index of the last step whose response ended
    const serverCloses: Array<{ after: number; reason: string }> = [];
    conn.on('connect', () => { connects++; });
    conn.on('disconnect', (_origin: unknown, _targets: unknown, err: Error & { code?: string }) => {
      // UND_ERR_INFO: undici itself let the connection go (Connection: close, upgrade); anything else is the server's close.
      if (err?.code !== 'UND_ERR_INFO') serverCloses.push({ after, reason: err?.message ?? 'closed' });
    });
    const steps: Array<[string, () => Promise<Exchange>]> = [
      ['a stream', () => chat(chatBody({ stream: true }), keys.main, { connection: conn })],
      ['a plain chat request', () => chat(chatBody(), keys.main, { connection: conn })],
      ['GET /models', () => send({ method: 'GET', path: '/models', auth: keys.main, connection: conn })],
    ];
    const seen: string[] = [];
    let judgedPairs = 0; // requests sent on a connection the response before left open
    // Not paced (it counts its connections): it keeps out of the quiet sections (SVC-9's lone requests, SVC-10) as the
    // ramps do, but waits no longer than a paced request would, so a slow target's sections never time this test out.
    const vacate = await runGovernor().occupy(DEFAULT_429_BUDGET.maxTotalWaitMs);
    try {
      let prev: { what: string; ex: Exchange } | undefined;
      for (const [i, [what, go]] of steps.entries()) {
        const connectsBefore = connects;
        const ex = await go();
        after = i;
        const announced = prev && /(^|,)\s*close\s*(,|$)/i.test(prev.ex.headers.connection ?? '');
        seen.push(`${what}: ${ex.status === undefined ? `no response (${ex.error?.message})` : `HTTP ${ex.status}`}${ex.connection?.reused ? ' on the same connection' : connects > connectsBefore ? ' on a new connection' : ''}`);
        // A response cut short (cap, deadline) says nothing about the connection after it.
        if (prev?.ex.error) t.inconclusive(`${prev.what} was cut short (${prev.ex.error.message}), so reuse after it cannot be judged`);
        // Closing after announcing it is what the clause allows: a connection not left open,
        // so there is nothing of it to judge.
        if (prev && !announced) {
          judgedPairs++;
          const closed = serverCloses.find((c) => c.after === i - 1);
          const left = `the connection left open after ${prev.what} (no Connection: close)`;
          if (ex.status === undefined && ex.error?.kind === 'reset') {
            t.fail(`${what} sent at once on ${left} to be answered`, `${ex.error.message}: the server had closed it (${seen.join('; ')})`, ex);
          }
          t.check(!closed && connects === connectsBefore, `${what} carried by ${left}`,
            () => `the server closed it after ${prev!.what}${closed ? ` (${closed.reason})` : ''}; a new connection was needed (${seen.join('; ')})`, ex);
        }
        if (ex.status === undefined) t.inconclusive(`${what} got no response (${ex.error?.message}), so reuse after it cannot be judged`);
        prev = { what, ex };
      }
      if (judgedPairs === 0) t.inconclusive(`every response announced Connection: close, so no connection was left open to carry the next request (${seen.join('; ')})`);
      t.note(`${connects} connection(s) for ${steps.length} requests: ${seen.join('; ')}`);
    } finally {
      vacate();
      conn.removeAllListeners('disconnect');
      await conn.destroy().catch(() => {});
    }
  }, { requests: 3 });

  // Routers and gateways break under concurrent keep-alive traffic in ways one request at a
  // time never shows (a 200 with an empty body when the upstream connection was busy):
  // two rounds of BURST valid requests at once, the second on the connections the first
  // left open, every answer judged by the success-body rule (lib/spec/rules/success-body.ts);
  // a request with no answer within the run's deadline fails it (answering is SVC-1's clause).
  clause('svc/concurrent-burst', 'SVC-1', `two bursts of ${BURST} concurrent valid chat requests over kept-alive connections each get 200 and a whole chat completion`, async (t) => {
    burstVerdict(t, await runBurst());
  }, { requests: 2 });

  // The same burst judged for cross-talk: each of its requests carries its own canary and
  // prompt length; what the target gives to tell replies apart is learned from SVC-9's lone
  // requests (and any burst request that overlapped no other).
  clause('svc/concurrent-burst/cross-talk', 'SVC-9', `every reply of the two bursts of ${BURST} concurrent chat requests is its own request's (canary, usage, id)`, async (t) => {
    const [b, alone] = await Promise.all([runBurst(), learnAlone()]);
    burstCrossTalkVerdict(t, b, alone);
  }, { requests: 4, stream: { none: 'judges the plain burst of SVC-1' } });
});

/** Requests per key of SVC-9's burst (fewer when the target rate-limits). */
const CROSS_PER_KEY = 32;
const CROSS_PER_KEY_THROTTLED = 8;
/** Long streams SVC-10 holds, then cancels. */
const HELD_STREAMS = 8;

describe('SVC: under concurrency', () => {
  // Lone requests first teach what evidence the target gives (lib/spec/rules/cross-talk.ts);
  // two streams cancelled after their first token come next (a pool that mixes replies up
  // after a cancellation); then 2 keys x 32 streaming and plain requests at once, each
  // with its own canary and prompt length. Every answer also goes to the run-wide
  // success-body rule (SVC-1), so the burst is its evidence too.
  clause('svc/cross-talk', 'SVC-9', `${CROSS_PER_KEY} concurrent streaming and plain requests per key each get their own reply (canary, usage, id)`, async (t) => {
    let n = 0;
    const lone = aloneForms(t, await learnAlone());
    const { forms } = lone;
    if (forms.includes(true)) for (let i = 0; i < 2; i++) await chat(crossRequest(n++, true, 'main', keys.main).body, keys.main, { maxBodyBytes: 256 * 1024, cancel: { afterEvent: hasContent } });
    const perKey = lone.throttled ? CROSS_PER_KEY_THROTTLED : CROSS_PER_KEY;
    const keyset: Array<[string, AuthSpec]> = [['main', keys.main], ...(keys.limited ? [['limited', keys.limited] as [string, AuthSpec]] : [])];
    const requests = keyset.flatMap(([label, key]) => Array.from({ length: perKey }, (_, j) => crossRequest(n++, forms[j % forms.length]!, label, key)));
    const answers = await Promise.all(requests.map((r) => sendCross(r)));
    crossTalkBurstVerdict(t, lone, answers, `${keyset.map(([l]) => l).join(' and ')} key${keyset.length > 1 ? 's' : ''}${lone.throttled ? `, ${perKey} per key: the target rate-limits` : ''}`);
  }, { requests: 4, stream: { none: 'sends streaming and plain requests in one burst' } });

  // A short stream's TTFT alone, with K long streams held, then right after cancelling
  // them: a target that keeps generating for gone clients shows the third far above the
  // first. Judged only where the held streams load the target (the second TTFT shows it).
  clause('svc/cancel-frees-capacity', 'SVC-10', `a short stream is served as fast after ${HELD_STREAMS} long streams are cancelled as before them`, (t) => cancelFreesCapacity(t, HELD_STREAMS), { requests: 4, stream: { none: 'streams only: cancelling a stream is what it probes' } });
});
