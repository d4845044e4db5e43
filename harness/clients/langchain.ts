// LangChain's ChatOpenAI (@langchain/openai), driven as its docs show:
// `new ChatOpenAI({ model, apiKey, configuration: { baseURL } })`, `invoke()` and
// `stream()`. It has no model listing. It runs the openai client underneath (with
// that client's retries off, and its own retry loop on top), sends
// stream_options.include_usage on every stream, and raises the openai error classes,
// stamped with lc_error_code for 401 and 429.
import { ChatOpenAI } from '@langchain/openai';
import { isNumber, PROMPT, type Driver, type RaisedError, type Reply, type Setup } from './driver.ts';

// LangSmith tracing, when a user's environment switches it on, would ship every
// conversation of the run to a third party; it plays no part in what is under test.
// (Tests run in worker threads: this changes the worker's copy of the environment only.)
for (const v of ['LANGSMITH_TRACING', 'LANGCHAIN_TRACING_V2', 'LANGCHAIN_TRACING']) process.env[v] = 'false';

/** What each status raises (openai's class; LangChain adds its tag where it has one). */
export const LANGCHAIN_ERRORS: Record<number, { cls: string; tag?: string }> = {
  400: { cls: 'BadRequestError' },
  401: { cls: 'AuthenticationError', tag: 'MODEL_AUTHENTICATION' },
  403: { cls: 'PermissionDeniedError' },
  429: { cls: 'RateLimitError', tag: 'MODEL_RATE_LIMIT' },
};

export function langchainDriver(packages: string): Driver {
  const chat = (s: Setup, model: string, extra: Record<string, unknown> = {}) => new ChatOpenAI({
    model, apiKey: s.apiKey, timeout: s.timeoutMs,
    configuration: { baseURL: s.baseURL, fetch: s.fetch, ...(s.headers ? { defaultHeaders: s.headers } : {}) },
    ...(s.maxRetries === undefined ? {} : { maxRetries: s.maxRetries }),
    ...extra,
  });
  const messages = [{ role: 'user', content: PROMPT }];
  return {
    packages,
    usageOptIn: false,
    async complete(s, model): Promise<Reply> {
      const m = await chat(s, model).invoke(messages, { signal: s.signal });
      return { text: textOf(m), finishReason: str(m.response_metadata?.finish_reason), usage: usageOf(m.usage_metadata) };
    },
    async stream(s, model, o): Promise<Reply> {
      let full: Awaited<ReturnType<ChatOpenAI['invoke']>> | undefined;
      let text = '';
      for await (const chunk of await chat(s, model, o.usage ? {} : { streamUsage: false }).stream(messages)) {
        text += textOf(chunk);
        full = full ? full.concat(chunk) : chunk;
      }
      return { text, finishReason: str(full?.response_metadata?.finish_reason), usage: usageOf(full?.usage_metadata) };
    },
    invalid(s, model) {
      // modelKwargs are spread into the body after `model` (a non-string model would crash
      // LangChain's own model-name checks before sending; null passes them).
      return chat(s, model, { modelKwargs: { model: null } }).invoke(messages, { signal: s.signal });
    },
    raisedFor(err, status) {
      const want = LANGCHAIN_ERRORS[status];
      const e = err as { constructor?: { name?: string }; status?: number; lc_error_code?: string };
      return !!want && e?.constructor?.name === want.cls && e.status === status && (want.tag === undefined || e.lc_error_code === want.tag);
    },
    describe(err): RaisedError {
      const e = err as Error & { status?: number; lc_error_code?: string };
      const kind = `${e?.constructor?.name ?? typeof err}${e?.lc_error_code ? ` (${e.lc_error_code})` : ''}`;
      return { kind, status: e?.status, message: e?.message ?? String(err) };
    },
  };
}

function textOf(m: { content?: unknown; text?: unknown }): string {
  if (typeof m.content === 'string') return m.content;
  return typeof m.text === 'string' ? m.text : '';
}

function usageOf(u: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | undefined): Reply['usage'] {
  if (!u) return undefined;
  return {
    prompt: isNumber(u.input_tokens) ? u.input_tokens : undefined,
    completion: isNumber(u.output_tokens) ? u.output_tokens : undefined,
    total: isNumber(u.total_tokens) ? u.total_tokens : undefined,
  };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
