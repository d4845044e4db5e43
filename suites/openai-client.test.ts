// SVC-4: the official openai client, driven as its users drive it (baseURL = target,
// apiKey = a service key); see harness/openai-sdk.ts for the one deviation.
import { describe } from 'vitest';
import OpenAI from 'openai';
import { clause, type ClauseContext } from '../harness/clause-test.ts';
import { brainId, chatBody, config, keys, models } from '../harness/target.ts';
import { client, curlFor } from '../harness/openai-sdk.ts';

async function sdkCall<T>(t: ClauseContext, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    t.fail(`${what} to succeed`, `${(err as Error).constructor.name}: ${(err as Error).message}`);
  }
}

describe('SVC-4: the official openai client', () => {
  clause('SVC-4', 'models.list() returns the configured models', async (t) => {
    curlFor(t, 'GET', '/models');
    const ids: string[] = [];
    await sdkCall(t, 'models.list()', async () => { for await (const m of client().models.list()) ids.push(m.id); });
    for (const m of models) t.check(ids.includes(m), `"${m}" in models.list()`, JSON.stringify(ids).slice(0, 200));
  });

  clause('SVC-4', 'chat.completions.create() returns the reply text', async (t) => {
    const body = chatBody();
    curlFor(t, 'POST', '/chat/completions', body);
    const res = await sdkCall(t, 'chat.completions.create()', () => client().chat.completions.create(body as any));
    const text = res.choices?.[0]?.message?.content;
    t.check(typeof text === 'string' && text.length > 0, 'choices[0].message.content text', JSON.stringify(text));
  });

  clause('SVC-4', 'a stream iterated with the SDK yields the reply and a finish_reason', async (t) => {
    const body = chatBody({ stream: true });
    curlFor(t, 'POST', '/chat/completions', body);
    let text = '';
    let finish: string | null | undefined;
    await sdkCall(t, 'streaming create()', async () => {
      const stream = await client().chat.completions.create(body as any) as unknown as AsyncIterable<any>;
      for await (const chunk of stream) {
        text += chunk.choices?.[0]?.delta?.content ?? '';
        finish = chunk.choices?.[0]?.finish_reason ?? finish;
      }
    });
    t.check(text.length > 0, 'streamed text', '""');
    t.check(finish === 'stop', 'finish_reason "stop" in the stream', JSON.stringify(finish));
  });

  clause('SVC-4', 'a brain answers through model "brain:<uuid>"', async (t) => {
    if (!brainId) t.skip('BRAIN_ID is not set');
    const body = chatBody({ model: `brain:${brainId}` });
    curlFor(t, 'POST', '/chat/completions', body);
    const res = await sdkCall(t, 'create() with a brain', () => client().chat.completions.create(body as any));
    t.check(typeof res.choices?.[0]?.message?.content === 'string', 'a reply message', JSON.stringify(res.choices?.[0]));
  });

  const errorCases: Array<[string, number, keyof typeof OpenAI, () => { key: string; body: Record<string, unknown> } | string]> = [
    ['an invalid request', 400, 'BadRequestError', () => ({ key: config.apiKey!, body: { model: models[0], messages: 'not-an-array' } })],
    ['an unknown key', 401, 'AuthenticationError', () => ({ key: (keys.unknown as { key: string }).key, body: chatBody() })],
    ['a key without brains:invoke on a brain', 403, 'PermissionDeniedError', () =>
      !config.limitedApiKey ? 'LIMITED_API_KEY is not set' : !brainId ? 'BRAIN_ID is not set'
        : { key: config.limitedApiKey, body: chatBody({ model: `brain:${brainId}` }) }],
  ];
  for (const [what, status, cls, make] of errorCases) {
    clause('SVC-4', `${what} raises ${cls} (HTTP ${status}) carrying the server's message`, async (t) => {
      const c = make();
      if (typeof c === 'string') t.skip(c);
      const { key, body } = c as { key: string; body: Record<string, unknown> };
      curlFor(t, 'POST', '/chat/completions', body, key);
      const Expected = OpenAI[cls] as unknown as new (...a: any[]) => Error;
      try {
        await client(key).chat.completions.create(body as any);
      } catch (err) {
        const e = err as InstanceType<typeof OpenAI.APIError>;
        t.check(err instanceof Expected, `${cls}`, `${(err as Error).constructor.name} (status ${e.status}): ${e.message}`);
        const serverMessage = (e.error as { message?: unknown } | undefined)?.message;
        t.check(typeof serverMessage === 'string' && e.message.includes(serverMessage), 'the error.message of the body in the SDK error', e.message);
        return;
      }
      t.fail(cls, 'the call succeeded');
    });
  }

});
