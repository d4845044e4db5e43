// The official openai client (any major: 4, 5, 6, 7 are installed side by side as
// npm aliases), driven as its README shows: `new OpenAI({ baseURL, apiKey })`,
// `models.list()`, `chat.completions.create()`, with and without `stream: true`.
// The module is passed in, so one driver serves every major and each major is
// imported (and may fail) on its own.
import { isNumber, PROMPT, type Driver, type RaisedError, type Reply, type Setup } from './driver.ts';

/** The part of the openai module the driver uses; identical across majors 4 to 7. */
interface OpenAIModule {
  default: new (opts: Record<string, unknown>) => any;
  [errorClass: string]: unknown;
}

/** What each status raises in every major (openai-node src/core/error.ts). */
export const OPENAI_ERROR_CLASSES: Record<number, string> = {
  400: 'BadRequestError', 401: 'AuthenticationError', 403: 'PermissionDeniedError', 429: 'RateLimitError',
};

export function openaiDriver(mod: OpenAIModule, packages: string): Driver {
  const OpenAI = mod.default;
  const client = (s: Setup) => new OpenAI({
    baseURL: s.baseURL, apiKey: s.apiKey, fetch: s.fetch, timeout: s.timeoutMs,
    ...(s.headers ? { defaultHeaders: s.headers } : {}),
    ...(s.maxRetries === undefined ? {} : { maxRetries: s.maxRetries }),
  });
  const opts = (s: Setup) => (s.signal ? { signal: s.signal } : undefined);
  const messages = [{ role: 'user', content: PROMPT }];
  return {
    packages,
    usageOptIn: true,
    async listModels(s) {
      const ids: string[] = [];
      for await (const m of client(s).models.list()) ids.push(m.id);
      return ids;
    },
    async complete(s, model): Promise<Reply> {
      const res = await client(s).chat.completions.create({ model, messages }, opts(s));
      const choice = res?.choices?.[0];
      return { text: choice?.message?.content, finishReason: choice?.finish_reason, usage: usageOf(res?.usage) };
    },
    async stream(s, model, o): Promise<Reply> {
      const stream = await client(s).chat.completions.create({
        model, messages, stream: true, ...(o.usage ? { stream_options: { include_usage: true } } : {}),
      });
      const r: Reply = { text: '' };
      for await (const chunk of stream) {
        // openai 4 yields {event, data} for a named SSE event instead of the chunk: no choices, no text.
        if (chunk && !('choices' in chunk) && 'event' in chunk && !r.remarks) {
          r.remarks = [`the client yielded {event: ${JSON.stringify(chunk.event)}, data} objects instead of chat chunks (named SSE events)`];
        }
        r.text += chunk?.choices?.[0]?.delta?.content ?? '';
        r.finishReason = chunk?.choices?.[0]?.finish_reason ?? r.finishReason;
        r.usage = usageOf(chunk?.usage) ?? r.usage;
      }
      return r;
    },
    invalid(s, _model) {
      return client(s).chat.completions.create({ model: null, messages }, opts(s));
    },
    raisedFor(err, status) {
      const Cls = mod[OPENAI_ERROR_CLASSES[status]!] as (new (...a: never[]) => unknown) | undefined;
      return !!Cls && err instanceof Cls && (err as { status?: number }).status === status;
    },
    describe(err): RaisedError {
      const e = err as Error & { status?: number };
      return { kind: e?.constructor?.name ?? typeof err, status: e?.status, message: e?.message ?? String(err) };
    },
  };
}

function usageOf(u: any): Reply['usage'] {
  if (!u || typeof u !== 'object') return undefined;
  return {
    prompt: isNumber(u.prompt_tokens) ? u.prompt_tokens : undefined,
    completion: isNumber(u.completion_tokens) ? u.completion_tokens : undefined,
    total: isNumber(u.total_tokens) ? u.total_tokens : undefined,
  };
}
