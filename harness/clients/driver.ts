// What every client driver offers the client suites: the operations of the client x
// operation matrix, each done the way that client's users do it. A driver imports
// only its own client library and nothing of the run's configuration, so a library
// that fails to load takes down only its own tests, and unit tests can drive it
// against any server.

export const PROMPT = 'Say hello in one short sentence.';

export interface Setup {
  baseURL: string;
  apiKey: string;
  /** The Wire's fetch (harness/clients/fetch.ts): guarded, counted. */
  fetch: typeof fetch;
  /** Extra headers on every request (HEADERS), set the way the client's users set them (defaultHeaders or its equivalent). */
  headers?: Record<string, string>;
  timeoutMs: number;
  /** undefined: the client's own default retry policy, as its users run it. */
  maxRetries?: number;
  /** Cuts a call short (the client's own abort option). */
  signal?: AbortSignal;
}

export interface Usage { prompt?: number; completion?: number; total?: number }

export interface Reply {
  text: string;
  finishReason?: string;
  /** Token usage as the client reports it; undefined when it reports none. */
  usage?: Usage;
  /** What the driver noticed about how the client handled the answer (shown in the report). */
  remarks?: string[];
}

export interface StreamOptions {
  /** Ask for usage the way this client's users do (openai: stream_options.include_usage; Vercel: includeUsage). */
  usage: boolean;
}

/** An error as the client raised it, in the client's own words. */
export interface RaisedError {
  /** Class name, plus the client's own tag where it has one (LangChain lc_error_code, Vercel name). */
  kind: string;
  status?: number;
  message: string;
}

export interface Driver {
  /** Installed package(s) behind this client, e.g. "openai 4.104.0". */
  readonly packages: string;
  /** Whether asking for stream usage is opt-in for this client's users (LangChain asks by default). */
  readonly usageOptIn: boolean;
  listModels?(s: Setup): Promise<string[]>;
  complete(s: Setup, model: string): Promise<Reply>;
  stream(s: Setup, model: string, o: StreamOptions): Promise<Reply>;
  /**
   * A request the spec says gets 400 (CHAT-2: model not a string), sent through the
   * client's own channel for extra body fields (openai: the body; Vercel:
   * providerOptions; LangChain: modelKwargs), since none of them sends an invalid body on its own.
   */
  invalid(s: Setup, model: string): Promise<unknown>;
  /** The error this client raises for `status` is the one its users catch. */
  raisedFor(err: unknown, status: number): boolean;
  describe(err: unknown): RaisedError;
}

export function usageText(u: Usage | undefined): string {
  if (!u || (u.prompt === undefined && u.completion === undefined && u.total === undefined)) return 'no usage reported';
  return `usage prompt ${u.prompt ?? '?'}, completion ${u.completion ?? '?'}, total ${u.total ?? '?'}`;
}

export function isNumber(v: unknown): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}
