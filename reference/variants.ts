// The catalog of legal variants of the reference server.
//
// Why: the spec and the OpenAI-style clients allow many wire-level choices. The
// self-tests run the suite against the reference with these switched on (alone and
// combined) and demand a clean pass (EV-11 may warn for sse-named-event), which proves
// the suite judges by the spec and not by one server's habits; and, test by test, every
// pass of the reference run stays a pass unless the variant declares why not (lessEvidence).

export interface VariantInfo {
  description: string;
  /**
   * Tests this variant may leave without a pass the reference run gives them (an
   * `inconclusive`, a `skip`), each with why: stable test ids, or a prefix ending in "/"
   * for a group. A legal variant may never turn a pass into anything else undeclared
   * (selftest/e2e/legal-variants.test.ts compares every test with the reference run's).
   */
  lessEvidence?: Record<string, string>;
}

const CATALOG = {
  'sse-crlf': { description: 'SSE lines end with CRLF.' },
  'sse-cr': { description: 'SSE lines end with a lone CR.' },
  'sse-comments': { description: 'A leading ": reference stream" comment and ": ping" comment lines between events.' },
  'sse-fields': { description: 'Events carry id: lines; the first one also carries retry:.' },
  'sse-named-event': { description: 'Chunk events carry "event: message" (legal SSE; EV-11 SHOULD warning only).' },
  'sse-no-space': { description: 'data: fields are written "data:{...}" without the space.' },
  'one-chunk': { description: 'One chunk carries the role, the whole content and the finish_reason.' },
  'char-per-chunk': { description: 'One character per content chunk.' },
  'no-usage-chunk': { description: 'stream_options.include_usage is ignored (no usage chunk).' },
  'role-chunk-null-content': { description: 'The first delta is {"role":"assistant","content":null}.' },
  'extra-fields': { description: 'Unknown extra fields in every object: completion, choice, message, usage, chunks, model entries, error bodies.' },
  'charset': { description: '"; charset=utf-8" on every Content-Type.' },
  'gzip': { description: 'JSON and SSE bodies are gzip-compressed when Accept-Encoding allows it (SSE flushed per event).' },
  'chunked': { description: 'JSON bodies use Transfer-Encoding: chunked (no Content-Length), written in several pieces.' },
  'connection-close': {
    description: 'Connection: close on every response.',
    lessEvidence: { 'svc/connection-reuse': 'every response announces Connection: close, so no connection is left open for SVC-8 to judge' },
  },
  'resolved-model': { description: 'svc-auto replies name the model svc-2026-11-01; brain replies name svc.' },
  'unknown-model-400': { description: 'Unknown models are refused with 400 instead of 404.' },
  'error-param-absent': { description: 'Error bodies carry no param key.' },
  'slow-stream': { description: '400 ms before the first SSE chunk, 30 ms between chunks.' },
  'slow-json': { description: '300 ms before non-stream chat replies.' },
  'tight-rate-limit': { description: 'The main key is limited to 25 requests per 1000 ms window, so a run meets 429s and must honour Retry-After.' },
  'split-writes': { description: 'Every SSE event is written in 2-3 socket writes with small delays, with CRLF line ends split between CR and LF.' },

  // --- what the fixed probes meet -------------------------------------------------
  'auth-lenient-bearer': { description: 'The Bearer scheme in any case with one or more spaces before the key (RFC 9110 §11.1, §11.4), and 401s carry WWW-Authenticate: Bearer.' },
  'retry-after-http-date': { description: '429 answers advise their wait only as Retry-After with an HTTP-date (IMF-fixdate, RFC 9110 §10.2.3); no retry-after-ms, no x-ratelimit-*.' },
  'ratelimit-reset-only': { description: '429 answers advise their wait only by x-ratelimit-reset-requests, as a Go-style duration ("1s", "1m0.5s").' },
  'retry-after-ms-only': { description: '429 answers advise their wait only by retry-after-ms.' },
  'brain-route-201': { description: 'POST /brains/{id}/chat answers 201 Created with the chat completion (any 2xx is legal).' },
  'keep-alive-timeout': { description: 'Keep-Alive: timeout=1 on every response; idle connections are closed after 1 s, as advertised.' },
  // --- outside the base URL -------------------------------------------------------
  'outside-base-plain-404': { description: 'Paths outside the base URL /v1 (such as VER-2\'s /v2/models) answer 404 text/plain "Not Found": the spec asks nothing there, so ERR-1 must not judge it.' },
  // --- what a server does with parameters it does not know (CHAT-8 allows both) ---
  'unknown-params-400': { description: 'Top-level request fields that are not OpenAI chat parameters are refused with 400 ("Unrecognized request argument supplied").' },
  'n-ignored': { description: 'n is ignored: every completion has one choice, whatever n asks (n is not in the spec; CHAT-8 lets a server ignore a field it does not know).' },
  'params-ignored': { description: 'Optional parameters are never validated: out-of-range or mistyped n, max_tokens, temperature, top_p are ignored (200).' },
  // --- streams that repeat themselves legally (EV-12 judges snapshots, not repetition) ---
  'repetitive-deltas': { description: 'Streams open with a role-only delta ({"role":"assistant"}, no content), then a word repeated on purpose one delta each ("ha", "ha", "ha"), empty deltas, one-character deltas of a repetitive run ("a", "a", "a"), one delta that repeats all of those (11 characters: too short to tell from a chance repetition), then the reply word by word. Single-chunk replies are one-chunk\'s; the usage-only last chunk comes with include_usage.' },
  // --- the streaming path: legal ways for stream: true requests to differ from plain ones ---
  'stream-refusals-400': { description: 'stream: true requests for an unknown model or an unknown brain are refused with 400 (plain ones get 404; CHAT-7 and BRAIN-3 allow both).' },
  'brain-route-stream-json': { description: 'POST /brains/{id}/chat ignores stream: true and answers a plain JSON completion (the spec does not say that route streams).' },
  // --- tight rate limits in several shapes (the spec leaves limits open): the suite paces itself, never judges a clause on a 429 ---
  'limit-per-key-2s': { description: 'The main and limited keys each get 12 requests per 2000 ms window (the rate-limit key keeps its own 10 per 1000 ms); 429s carry Retry-After seconds, retry-after-ms and x-ratelimit-*.' },
  'limit-account-2s': { description: 'One budget of 16 requests per 2000 ms window shared by every key of the account: the limited and rate-limit keys drain the main key\'s budget too; x-ratelimit-* describe the account budget.' },
  'limit-account-5s': { description: 'One budget of 30 requests per 5000 ms window shared by every key of the account.' },
  'limit-burst': { description: 'The main and limited keys each draw on a token bucket of 12 requests refilled at 6 per second: a burst goes through, then the key is served at the refill rate; a 429 advises the wait for the next token.' },
  'retry-after-seconds-only': { description: '429 answers advise their wait only as Retry-After delta-seconds (no retry-after-ms, no x-ratelimit-*).' },
  // --- error messages that name the request (Express-style "Cannot GET /path?query"): AUTH-9 judges keys sent as credentials, not the URL we built ---
  'error-echoes-url': { description: '401 and 404 error messages end with the request line as received, query string included ("... (POST /v1/chat/completions?api_key=...)"), so the key-in-query probes see their own key echoed.' },
  // --- sparse servers: legal answers that leave a test less to judge (no pass without evidence) ---
  'no-rate-limit': {
    description: 'No rate limit within the suite\'s reach: no request is ever answered 429, and no x-ratelimit-* headers (the spec leaves the limits open; LIM-1\'s probe is bounded).',
    lessEvidence: {
      'limits/429': 'no 429 within the probe\'s bounds: LIM-1 says inconclusive, not pass',
      'limits/retry-hint': 'no 429, so no retry hint to read',
      'limits/served-again': 'no 429, so nothing to recover from',
      'limits/other-key': 'no 429, so no throttled key to compare another key with',
      ...Object.fromEntries(['openai@4', 'openai@5', 'openai@6', 'openai@7', 'ai-sdk@6', 'langchain@1']
        .map((c) => [`clients/${c}/error-429`, 'no 429 to provoke, so the client\'s rate-limit error is never raised'])),
    },
  },
  'capped-empty-reply': { description: 'A request that caps the reply (max_tokens, max_completion_tokens) gets no text: content "" and finish_reason "length" (completion_tokens 0), or as a stream a role chunk, a finish chunk with "length", then [DONE], as reasoning models do when the cap is spent on hidden reasoning. Requests without a cap get the full reply (EV-4 asks for content on them).' },
  // --- paths: a real route's path with one trailing slash (RFC 3986 leaves /a and /a/ to the server; the spec names no such path) ---
  'route-trailing-slash': { description: 'One trailing slash after a route\'s path is that route (POST /chat/completions/, GET /models/, POST /brains/{id}/chat/); a further segment is still an unknown path (404).' },
  // --- requests as varied as real clients send ---
  'reply-in-kind': { description: 'A request holding non-ASCII words gets up to eight of them back after the reply (multi-byte UTF-8, emoji, CJK, right-to-left, combining marks), as a model answers in the user\'s language.' },
  'large-bodies-served': { description: 'Request bodies up to 64 MiB are served (a body limit is not shown): the oversize probe gets a served reply.' },
  'body-limit-64k': { description: 'Request bodies above 64 KiB are refused with 413 and an error body: the near-limit conversation is refused, as a server with a tighter limit may.' },
  // --- whose reply is whose: legal targets that give SVC-9 less evidence, and a fast writer EV-13 must not mistake for a buffer ---
  'never-echoes': { description: 'Replies never repeat a canary the request asks for (a model need not follow the instruction): SVC-9 judges by usage and ids.' },
  'usage-own-count': { description: 'usage.prompt_tokens is counted its own way (one and a half of the reference\'s per token, plus 5): SVC-9 learns the relation from lone requests.' },
  'fast-writer': { description: 'Replies are 48 words and every stream is written at once, within a few ms (a fast server: EV-13 is inconclusive on it, never a warning).' },
  // --- what no clause forbids, and near misses refused another legal way ---
  'empty-messages-accepted': { description: 'An empty messages array is served (CHAT-3 rules only a missing messages or one that is not an array): a reply to no conversation.' },
  'json-bom-tolerated': { description: 'A leading byte order mark is ignored (RFC 8259 §8.1 lets a parser do so); every other body that is not RFC 8259 JSON (NaN, single quotes, trailing commas, comments) is refused with 400 code json_invalid, naming the byte where parsing stopped.' },
  'case-variant-keys-refused': { description: 'A key that equals a known field only in another letter case (Model, MESSAGES, a message\'s Role) is refused with 400 naming it ("did you mean ..."), even beside the real key.' },
} satisfies Record<string, VariantInfo>;

export type VariantName = keyof typeof CATALOG;

export const VARIANTS: Record<string, VariantInfo> = CATALOG;

export function isVariantName(name: string): name is VariantName {
  return Object.prototype.hasOwnProperty.call(CATALOG, name);
}
