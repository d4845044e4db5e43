// The project's clause registry: every checkable statement of the hosted LM API
// spec, by its stable ID, with its level and the requirement in our own words.
// Tests name a clause from here; reports group by `section`.

export type Level = 'MUST' | 'COMPAT' | 'SHOULD' | 'INFO';

export interface Clause {
  level: Level;
  section: SectionId;
  requirement: string;
}

export const SECTIONS = {
  SVC: 'What the service does',
  RES: 'Resources',
  MOD: 'GET /models',
  CHAT: 'POST /chat/completions requests',
  BRAIN: 'Brains',
  UNAV: 'Unavailable endpoints',
  AUTH: 'Authentication and scopes',
  EV: 'Streaming (server-sent events)',
  ERR: 'Errors',
  LIM: 'Rate limits',
  VER: 'Versioning',
} as const;
export type SectionId = keyof typeof SECTIONS;

const c = (level: Level, section: SectionId, requirement: string): Clause => ({ level, section, requirement });

export const CLAUSES = {
  'SVC-1': c('MUST', 'SVC', 'A valid chat request (a known model, one user message) is answered 200 with a chat completion.'),
  'SVC-2': c('MUST', 'SVC', 'GET /models answers 200 with the list of available models.'),
  'SVC-3': c('MUST', 'SVC', 'A brain can be invoked through POST /brains/{id}/chat and through model "brain:<uuid>".'),
  'SVC-4': c('MUST', 'SVC', 'The official openai client (newest major for this Node) lists models, completes, streams and reaches a brain; its typed errors match 400/401/403/429.'),
  'SVC-4b': c('SHOULD', 'SVC', 'Older official client majors and other common OpenAI-style clients (Vercel AI SDK, LangChain) work the same way.'),
  'SVC-5': c('MUST', 'SVC', 'stream: true is supported.'),
  'SVC-6': c('MUST', 'SVC', 'There are no image or video generation endpoints.'),
  'SVC-7': c('INFO', 'SVC', 'Whether a CORS preflight from an arbitrary browser origin is allowed to send Authorization (keys belong on backends).'),
  'SVC-8': c('SHOULD', 'SVC', 'A connection the server leaves open (no Connection: close) after a response, streamed or not, accepts the next request at once.'),
  'SVC-9': c('MUST', 'SVC', 'Every reply answers its own request: under concurrent traffic no reply, in content, usage or id, is that of another request (another key\'s above all); judged where a canary, usage or ids give evidence, else inconclusive.'),
  'SVC-10': c('SHOULD', 'SVC', 'A request whose client goes away stops costing capacity: after streams are cancelled, other requests are served as fast as without them.'),

  'RES-CC-1': c('MUST', 'RES', 'A chat completion id is a string "chatcmpl-" plus a non-empty suffix.'),
  'RES-CC-2': c('MUST', 'RES', 'A chat completion has object "chat.completion".'),
  'RES-CC-3': c('MUST', 'RES', 'A chat completion names its model as a non-empty string (an alias may resolve to a concrete name).'),
  'RES-CC-4': c('MUST', 'RES', 'A chat completion has a choices array with at least one choice.'),
  'RES-CC-5': c('MUST', 'RES', 'A chat completion carries a usage object.'),
  'RES-CH-1': c('MUST', 'RES', 'Each choice index is an integer; indices start at 0 and follow array order.'),
  'RES-CH-2': c('MUST', 'RES', 'Each choice holds a message whose role is "assistant".'),
  'RES-CH-3': c('MUST', 'RES', 'finish_reason is "stop" when a short reply ends normally.'),
  'RES-CH-4': c('SHOULD', 'RES', 'Any other finish_reason is one of OpenAI\'s: length, content_filter, tool_calls, function_call.'),
  'RES-MSG-1': c('MUST', 'RES', 'The reply message content is a string.'),
  'RES-US-1': c('MUST', 'RES', 'usage.prompt_tokens, completion_tokens and total_tokens are non-negative integers.'),
  'RES-US-2': c('SHOULD', 'RES', 'total_tokens is prompt_tokens + completion_tokens, and a non-empty reply has completion_tokens > 0.'),
  'RES-MOD-1': c('MUST', 'RES', 'Every configured service model is in the model list and answers a chat request.'),

  'MOD-1': c('COMPAT', 'MOD', 'The model list is {"object":"list","data":[...]} and every entry has a string id (entry object "model" is a SHOULD).'),
  'MOD-2': c('MUST', 'MOD', 'GET /models with a valid key answers 200 with a JSON content type.'),

  'CHAT-1': c('MUST', 'CHAT', 'A JSON request with model and messages gets 200; without stream or with stream: false the reply is JSON, not SSE.'),
  'CHAT-2': c('MUST', 'CHAT', 'A missing or non-string model is refused with 400 and an error body.'),
  'CHAT-3': c('MUST', 'CHAT', 'Missing messages, or messages that are not an array, are refused with 400 and an error body.'),
  'CHAT-4': c('MUST', 'CHAT', 'A message with no role, or with content no client sends (a number, an object), is refused with 400 and an error body.'),
  'CHAT-5': c('SHOULD', 'CHAT', 'A non-boolean stream value is refused with 400 and an error body.'),
  'CHAT-6': c('MUST', 'CHAT', 'A body that is not valid JSON is refused with 400 and an error body.'),
  'CHAT-7': c('MUST', 'CHAT', 'An unknown model is refused with 400 or 404 and an error body.'),
  'CHAT-8': c('MUST', 'CHAT', 'Usual OpenAI parameters and unknown extra fields never cause a 5xx: honoured, ignored, or refused with 400.'),
  'CHAT-9': c('SHOULD', 'CHAT', 'Multi-turn conversations with system, user and assistant messages are accepted.'),

  'BRAIN-1': c('MUST', 'BRAIN', 'POST /brains/{id}/chat for an existing brain, with brains:invoke and {"messages": [...]}, answers 2xx with a chat completion.'),
  'BRAIN-2': c('MUST', 'BRAIN', 'POST /chat/completions with model "brain:<uuid>" of an existing brain answers 200 with a chat completion.'),
  'BRAIN-3': c('MUST', 'BRAIN', 'A well-formed uuid that is no brain is refused with 400 or 404 and an error body, on both routes.'),
  'BRAIN-4': c('MUST', 'BRAIN', 'A brain id that is not a uuid is refused with 400 or 404 and an error body, on both routes.'),
  'BRAIN-5': c('SHOULD', 'BRAIN', 'stream: true with model "brain:<uuid>" streams like any chat completion.'),
  'BRAIN-6': c('INFO', 'BRAIN', 'Which model brain replies name, and whether the brain route accepts stream: true.'),

  'UNAV-1': c('MUST', 'UNAV', 'Image generation endpoints (/images/generations, /images/edits, /images/variations) never answer 2xx.'),
  'UNAV-2': c('MUST', 'UNAV', 'Video generation endpoints (/videos, /videos/generations) never answer 2xx.'),
  'UNAV-3': c('SHOULD', 'UNAV', 'Those endpoints and unknown paths answer 404 with an error body.'),

  'AUTH-1': c('MUST', 'AUTH', 'A request without Authorization gets 401 with an error body, on every endpoint.'),
  'AUTH-2': c('MUST', 'AUTH', 'A well-formed but unknown key gets 401 with an error body, on every endpoint.'),
  'AUTH-3': c('MUST', 'AUTH', 'A malformed Authorization header (other scheme, empty Bearer, bare key) gets 401 with an error body.'),
  'AUTH-4': c('MUST', 'AUTH', 'Authentication is checked first: a bad key with an otherwise invalid request still gets 401.'),
  'AUTH-5': c('MUST', 'AUTH', 'A streaming request with a missing or invalid key gets a plain JSON 401 error, not an event stream.'),
  'AUTH-6': c('MUST', 'AUTH', 'A valid key without brains:invoke gets 403 with an error body on both brain routes, streaming or not.'),
  'AUTH-7': c('MUST', 'AUTH', 'That key still gets 200 for a plain service model.'),
  'AUTH-8': c('MUST', 'AUTH', 'A key holding brains:invoke is not refused with 403 on either brain route.'),
  'AUTH-9': c('MUST', 'AUTH', 'No response body or header echoes a full API key.'),

  'EV-1': c('MUST', 'EV', 'stream: true answers 200 with Content-Type text/event-stream.'),
  'EV-2': c('MUST', 'EV', 'The body is well-formed SSE: events end with a blank line, payloads travel in data: fields.'),
  'EV-3': c('COMPAT', 'EV', 'Every payload but the terminator is a chat.completion.chunk with string id and model and well-typed choices.'),
  'EV-4': c('MUST', 'EV', 'The concatenated delta.content of choice 0 is a non-empty string.'),
  'EV-5': c('COMPAT', 'EV', 'Exactly one chunk per choice carries a finish_reason ("stop" on normal completion), and no content follows it.'),
  'EV-6': c('COMPAT', 'EV', 'The stream ends with the payload [DONE], and only the close of the response follows it.'),
  'EV-7': c('SHOULD', 'EV', 'All chunks of a stream share one id starting with "chatcmpl-".'),
  'EV-8': c('SHOULD', 'EV', 'The first delta of a choice carries role "assistant".'),
  'EV-9': c('INFO', 'EV', 'Whether stream_options.include_usage brings a final usage chunk, and its figures.'),
  'EV-10': c('MUST', 'EV', 'A stream finishes within the time limit and the connection is released.'),
  'EV-11': c('SHOULD', 'EV', 'Chunk events carry no event: field (openai v4 mistakes named events for something else).'),
  'EV-12': c('COMPAT', 'EV', 'Each chunk\'s delta.content is new text only: no stream whose deltas are cumulative snapshots of the reply ("Hel", "Hello", "Hello wor"), which every client concatenates into a garbled reply.'),
  'EV-13': c('SHOULD', 'EV', 'A stream is delivered as it is generated: the chunks of a long reply do not all arrive at once at its end, as through a buffering proxy.'),

  'ERR-1': c('MUST', 'ERR', 'Every response with status >= 400 carries an error body.'),
  'ERR-2': c('MUST', 'ERR', 'No request, valid or not, gets a 5xx other than 503.'),
  'ERR-3': c('SHOULD', 'ERR', 'error.message, error.type and error.code are non-empty.'),
  'ERR-4': c('MUST', 'ERR', 'A 503, whenever seen, carries an error body.'),
  'ERR-5': c('INFO', 'ERR', 'Whether error bodies carry param, and which type/code values appear per status.'),

  'LIM-1': c('MUST', 'LIM', 'Past the rate limit the target answers 429 with an error body: no other 5xx than 503, no dropped connection.'),
  'LIM-2': c('SHOULD', 'LIM', 'A 429 says when to retry: Retry-After, retry-after-ms, or x-ratelimit-reset-* headers.'),
  'LIM-3': c('SHOULD', 'LIM', 'After the advertised wait (at most 60 s) the same key is served again.'),
  'LIM-4': c('INFO', 'LIM', 'Whether throttling one key leaves another key unaffected.'),

  'VER-1': c('MUST', 'VER', 'The base URL ends with the path segment /v1.'),
  'VER-2': c('INFO', 'VER', 'Whether the same paths answer under another version segment (/v2/models).'),
} as const satisfies Record<string, Clause>;

export type ClauseId = keyof typeof CLAUSES;

export function isClauseId(id: string): id is ClauseId {
  return Object.prototype.hasOwnProperty.call(CLAUSES, id);
}

/** Levels whose violation fails a run (SHOULD too in strict mode). */
export function failsRun(level: Level, strict: boolean): boolean {
  return level === 'MUST' || level === 'COMPAT' || (strict && level === 'SHOULD');
}
