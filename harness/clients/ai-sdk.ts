// The Vercel AI SDK (`ai`) with its OpenAI-compatible provider, driven as its docs
// show: `createOpenAICompatible({ name, baseURL, apiKey })`, then `generateText()` and
// `streamText()`. It has no model listing. Errors come as APICallError (name
// "AI_APICallError") with the HTTP status in `statusCode` and the body's
// error.message as its message.
import { APICallError, generateText, streamText } from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { isNumber, PROMPT, type Driver, type RaisedError, type Reply, type Setup } from './driver.ts';

/** The provider name: also the key of its providerOptions. */
const NAME = 'chatgate';

export function aiSdkDriver(packages: string): Driver {
  const model = (s: Setup, id: string, includeUsage = false) => createOpenAICompatible({
    name: NAME, baseURL: s.baseURL, apiKey: s.apiKey, fetch: s.fetch, includeUsage,
    ...(s.headers ? { headers: s.headers } : {}),
  }).chatModel(id);
  const retries = (s: Setup) => ({ ...(s.maxRetries === undefined ? {} : { maxRetries: s.maxRetries }), ...(s.signal ? { abortSignal: s.signal } : {}) });
  return {
    packages,
    usageOptIn: true,
    async complete(s, id): Promise<Reply> {
      const r = await generateText({ model: model(s, id), prompt: PROMPT, ...retries(s) });
      return { text: r.text, finishReason: r.finishReason, usage: usageOf(r.usage) };
    },
    async stream(s, id, o): Promise<Reply> {
      const result = streamText({
        model: model(s, id, o.usage), prompt: PROMPT, ...retries(s),
        // Errors arrive as stream parts below; without a handler the SDK also prints them.
        onError: () => {},
      });
      const r: Reply = { text: '' };
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') r.text += part.text;
        else if (part.type === 'error') throw part.error;
        else if (part.type === 'finish') { r.finishReason = part.finishReason; r.usage = usageOf(part.totalUsage); }
      }
      return r;
    },
    invalid(s, id) {
      // providerOptions[name] fields the provider does not know are spread into the body, after `model`.
      return generateText({ model: model(s, id), prompt: PROMPT, providerOptions: { [NAME]: { model: null } as never }, ...retries(s) });
    },
    raisedFor(err, status) {
      return APICallError.isInstance(err) && err.statusCode === status;
    },
    describe(err): RaisedError {
      const e = err as Error & { statusCode?: number };
      const api = APICallError.isInstance(err);
      return { kind: api ? `APICallError (${e.name})` : e?.name ?? typeof err, status: api ? e.statusCode : undefined, message: e?.message ?? String(err) };
    },
  };
}

function usageOf(u: { inputTokens?: number; outputTokens?: number; totalTokens?: number } | undefined): Reply['usage'] {
  if (!u || ![u.inputTokens, u.outputTokens, u.totalTokens].some(isNumber)) return undefined;
  return {
    prompt: isNumber(u.inputTokens) ? u.inputTokens : undefined,
    completion: isNumber(u.outputTokens) ? u.outputTokens : undefined,
    total: isNumber(u.totalTokens) ? u.totalTokens : undefined,
  };
}
