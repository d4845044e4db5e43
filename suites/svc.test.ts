// SVC: what the service does (spec: "What the service does").
import { describe } from 'vitest';
import { clause } from '../harness/clause-test.ts';
import { brainChat, brainId, chat, chatBody, keys, listModels, send } from '../harness/target.ts';

describe('SVC: what the service does', () => {
  clause('SVC-1', 'a chat request with a known model and one user message gets 200 and a completion', async (t) => {
    const ex = await chat();
    t.status(ex, 200);
    const body = t.json(ex) as Record<string, unknown>;
    t.check(body !== null && typeof body === 'object' && !Array.isArray(body), 'a JSON object (a chat completion)', typeof body, ex);
    t.check(Array.isArray(body.choices), 'a chat completion with a choices array', 'no choices array', ex);
  });

  clause('SVC-2', 'GET /models answers 200 with a list', async (t) => {
    const ex = await listModels();
    t.status(ex, 200);
    t.json(ex);
  });

  clause('SVC-3', 'a brain answers on POST /brains/{id}/chat and as model "brain:<uuid>"', async (t) => {
    if (!brainId) t.skip('BRAIN_ID is not set');
    const route = await brainChat(brainId!);
    t.status(route, 200, 201);
    const form = await chat(chatBody({ model: `brain:${brainId}` }));
    t.status(form, 200);
  }, { requests: 2 });

  clause('SVC-5', 'stream: true is answered with an event stream', async (t) => {
    const ex = await chat(chatBody({ stream: true }));
    t.status(ex, 200);
    t.mediaType(ex, 'text/event-stream');
    t.check((ex.stream?.events.length ?? 0) > 0, 'at least one server-sent event', 'no event', ex);
  });

  clause('SVC-6', 'neither image nor video generation is served', async (t) => {
    for (const path of ['/images/generations', '/videos']) {
      const ex = await send({ method: 'POST', path, auth: keys.main, json: { model: 'svc', prompt: 'a cat' } });
      t.responded(ex);
      t.check(ex.status! < 200 || ex.status! >= 300, `POST ${path} not to succeed`, `HTTP ${ex.status}`, ex);
    }
  }, { requests: 2 });

  clause('SVC-7', 'CORS preflight from an arbitrary origin asking for Authorization', async (t) => {
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
});
