// The catalog of single, switchable defects of the reference server.
//
// Why: the self-tests run the conformance suite against the reference with each
// defect switched on and demand that exactly the declared clauses fail. That proves
// every verdict the suite can give is reachable and attributed to the right clause.
// Each entry breaks one thing; `clauses` lists the catalog IDs it is meant to break
// (it may break others as a consequence, those are not demanded).

import type { ClauseId } from '../lib/spec/clauses.ts';

export interface DefectInfo {
  /** Typed: a clause id that is not in the registry is a compile error. */
  clauses: ClauseId[];
  description: string;
  /** 'fuzz': only generated requests find it; the fixed probes pass clean on its clauses. 'outage': the target goes away (later tests are errors), its own self-test. */
  foundBy?: 'fuzz' | 'outage';
}

const CATALOG = {
  // --- authentication -------------------------------------------------------------
  'auth-none-required': { clauses: ['AUTH-1'], description: 'Requests without an Authorization header are served as the main key.' },
  'auth-wrong-scheme-accepted': { clauses: ['AUTH-3'], description: 'A known key is accepted after any scheme (Basic, Token) and with no scheme at all.' },
  'auth-empty-bearer-accepted': { clauses: ['AUTH-3'], description: '"Bearer " with an empty credential is served as the main key.' },
  'auth-any-key': { clauses: ['AUTH-2'], description: 'Any non-empty Bearer credential is accepted as the main key.' },
  'auth-401-no-body': { clauses: ['AUTH-1', 'ERR-1'], description: '401 answers carry an empty body.' },
  'auth-401-plain-text': { clauses: ['AUTH-1', 'ERR-1'], description: '401 answers are text/plain "Unauthorized".' },
  'auth-after-validation': { clauses: ['AUTH-4'], description: 'Body JSON, model and brain are validated before authentication (bad JSON without a key gets 400, unknown model 404).' },
  'auth-401-as-event-stream': { clauses: ['AUTH-5'], description: 'Streaming requests with a bad or missing key get 401 as text/event-stream with an SSE error event.' },
  'key-echoed-in-error': { clauses: ['AUTH-9'], description: '400 validation errors quote the caller\'s full API key in the message.' },
  'key-echoed-in-header': { clauses: ['AUTH-9'], description: 'Every response carries x-debug-key with the caller\'s full API key.' },

  // --- scopes ---------------------------------------------------------------------
  'scope-unchecked-model-form': { clauses: ['AUTH-6'], description: 'model "brain:<uuid>" works without the brains:invoke scope.' },
  'scope-unchecked-brain-route': { clauses: ['AUTH-6'], description: 'POST /brains/{id}/chat works without the brains:invoke scope.' },
  'scope-unchecked-stream': { clauses: ['AUTH-6'], description: 'Only streaming brain requests (both routes) skip the scope check.' },
  'scope-401-instead-of-403': { clauses: ['AUTH-6'], description: 'A missing scope is answered 401 instead of 403.' },
  'scope-404-instead-of-403': { clauses: ['AUTH-6'], description: 'A missing scope is answered 404 instead of 403.' },
  'scope-overrestrictive': { clauses: ['AUTH-7'], description: 'The key without brains:invoke gets 403 on plain service models too.' },
  'scope-inverted': { clauses: ['AUTH-6', 'AUTH-8'], description: 'The scope check is inverted: keys with brains:invoke get 403, keys without it pass.' },

  // --- brains ---------------------------------------------------------------------
  'brain-route-missing': { clauses: ['BRAIN-1', 'SVC-3'], description: 'POST /brains/{id}/chat answers 404 like an unknown path.' },
  'brain-model-form-missing': { clauses: ['BRAIN-2', 'SVC-3'], description: 'model "brain:<uuid>" is treated as an unknown model (404).' },
  'brain-route-different-shape': { clauses: ['BRAIN-1'], description: 'POST /brains/{id}/chat answers {"reply": "..."} instead of a chat completion.' },
  'brain-unknown-accepted': { clauses: ['BRAIN-3'], description: 'Any well-formed uuid is an existing brain.' },
  'brain-malformed-id-500': { clauses: ['BRAIN-4', 'ERR-2'], description: 'A malformed brain id is answered 500.' },
  'brain-malformed-accepted': { clauses: ['BRAIN-4'], description: 'A malformed brain id is served like the existing brain (200).' },
  'brain-stream-ignored': { clauses: ['BRAIN-5'], description: 'stream: true with model "brain:<uuid>" is answered with plain JSON.' },

  // --- chat completion resource ---------------------------------------------------
  'cc-id-no-prefix': { clauses: ['RES-CC-1'], description: 'Completion ids are "cmpl-..." instead of "chatcmpl-...".' },
  'cc-id-empty-suffix': { clauses: ['RES-CC-1'], description: 'Completion ids are exactly "chatcmpl-".' },
  'cc-object-wrong': { clauses: ['RES-CC-2'], description: 'object is "text_completion".' },
  'cc-model-missing': { clauses: ['RES-CC-3'], description: 'Completions have no model field.' },
  'cc-model-empty': { clauses: ['RES-CC-3'], description: 'Completions have model "".' },
  'cc-choices-empty': { clauses: ['RES-CC-4'], description: 'Completions have choices [].' },
  'cc-not-a-completion': { clauses: ['SVC-1'], description: 'Chat requests are answered 200 with {"reply": "..."} instead of a chat completion.' },
  'cc-usage-missing': { clauses: ['RES-CC-5'], description: 'Completions have no usage field.' },
  'cc-json-as-text': { clauses: ['CHAT-1'], description: 'Non-stream chat completions are served as text/plain.' },
  'ch-index-string': { clauses: ['RES-CH-1'], description: 'choices[i].index is the string "0".' },
  'ch-index-from-1': { clauses: ['RES-CH-1'], description: 'choices[i].index starts at 1.' },
  'ch-index-repeated': { clauses: ['RES-CH-1'], description: 'Every choice has index 0, so a request with n: 2 gets two choices both numbered 0.' },
  'ch-role-user': { clauses: ['RES-CH-2'], description: 'The reply message has role "user".' },
  'ch-message-missing': { clauses: ['RES-CH-2'], description: 'Choices have no message.' },
  'ch-finish-null': { clauses: ['RES-CH-3'], description: 'finish_reason is null on a normal completion.' },
  'ch-finish-done': { clauses: ['RES-CH-3'], description: 'finish_reason is "done" on a normal completion.' },
  'ch-finish-nonstandard': { clauses: ['RES-CH-4'], description: 'A reply cut by max_tokens finishes with "max_tokens" instead of "length".' },
  'msg-content-parts': { clauses: ['RES-MSG-1'], description: 'Reply content is [{"type":"text","text":...}] instead of a string.' },
  'msg-content-null': { clauses: ['RES-MSG-1'], description: 'Reply content is null.' },
  'usage-tokens-string': { clauses: ['RES-US-1'], description: 'Usage figures are strings.' },
  'usage-negative': { clauses: ['RES-US-1'], description: 'prompt_tokens is negative.' },
  'usage-float': { clauses: ['RES-US-1'], description: 'completion_tokens is 12.5.' },
  'usage-total-mismatch': { clauses: ['RES-US-2'], description: 'total_tokens is not prompt_tokens + completion_tokens.' },
  'usage-zero-completion': { clauses: ['RES-US-2'], description: 'completion_tokens is 0 although the reply is non-empty.' },
  'flaky-cc-id': { clauses: ['RES-CC-1'], description: 'Every other non-stream chat completion (counter-based) has id "cmpl-x".' },

  // --- models ---------------------------------------------------------------------
  'model-list-missing-svc': { clauses: ['RES-MOD-1'], description: '"svc" is missing from GET /models (chat with it still works).' },
  'models-empty-list': { clauses: ['RES-MOD-1'], description: 'GET /models answers {"object": "list", "data": []} (chat with svc-auto and svc still works): a list of no entries, so nothing in it for MOD-1\'s entry checks or a client\'s model list to judge.' },
  'model-svc-unusable': { clauses: ['RES-MOD-1'], description: '"svc" is listed but chat requests with it get 404.' },
  'models-bare-array': { clauses: ['MOD-1'], description: 'GET /models answers a bare JSON array.' },
  'models-404': { clauses: ['SVC-2', 'MOD-2'], description: 'GET /models answers 404 with an error body (no model list).' },
  'models-entry-no-id': { clauses: ['MOD-1'], description: 'Model list entries carry {name} only, no id.' },
  'models-object-missing': { clauses: ['MOD-1'], description: 'The model list has no object: "list".' },
  'models-text-plain': { clauses: ['MOD-2'], description: 'GET /models is served as text/plain.' },
  'models-entry-object-wrong': { clauses: ['MOD-1'], description: 'Model list entries have object "engine" (the SHOULD part of MOD-1).' },

  // --- chat requests --------------------------------------------------------------
  'accepts-missing-model': { clauses: ['CHAT-2'], description: 'A request without model is served with svc-auto.' },
  'accepts-model-number': { clauses: ['CHAT-2'], description: 'A non-string model is served with svc-auto.' },
  'accepts-missing-messages': { clauses: ['CHAT-3'], description: 'A request without messages is served.' },
  'accepts-messages-object': { clauses: ['CHAT-3'], description: 'messages given as an object is served.' },
  'accepts-message-without-role': { clauses: ['CHAT-4'], description: 'A message without role is served.' },
  'accepts-content-number': { clauses: ['CHAT-4'], description: 'Message content of an invalid type (number, plain object) is served.' },
  'bad-json-500': { clauses: ['CHAT-6', 'ERR-2'], description: 'A body that is not valid JSON is answered 500.' },
  'bad-json-200': { clauses: ['CHAT-6'], description: 'A body that is not valid JSON is answered like an empty default request (200).' },
  'unknown-param-500': { clauses: ['CHAT-8', 'ERR-2'], description: 'Any unknown top-level request field is answered 500.' },
  'params-500': { clauses: ['CHAT-8', 'ERR-2'], description: 'Requests with temperature or stream_options are answered 500.' },
  'unknown-model-200': { clauses: ['CHAT-7'], description: 'Unknown models are served (200).' },
  'unknown-model-500': { clauses: ['CHAT-7', 'ERR-2'], description: 'Unknown models are answered 500.' },
  'stream-false-sse': { clauses: ['CHAT-1'], description: 'stream: false is answered as an SSE stream.' },
  'stream-not-boolean-accepted': { clauses: ['CHAT-5'], description: 'A non-boolean stream (e.g. "yes") is accepted (200, plain JSON).' },
  'multi-turn-rejected': { clauses: ['CHAT-9'], description: 'Messages with role system or assistant are refused with 400.' },

  // --- streaming ------------------------------------------------------------------
  'stream-ignored': { clauses: ['SVC-5', 'EV-1'], description: 'stream: true is answered with a plain JSON completion.' },
  'stream-wrong-content-type': { clauses: ['EV-1', 'SVC-5', 'BRAIN-5'], description: 'Streams are served as text/plain (a correct event stream otherwise: SVC-1 must not fail on it).' },
  'stream-no-data-prefix': { clauses: ['EV-2', 'EV-4'], description: 'Stream payloads are raw JSON lines without a data: field.' },
  'stream-single-newlines': { clauses: ['EV-3'], description: 'Events are separated by a single newline (no blank line), so data lines merge.' },
  'stream-last-event-unterminated': { clauses: ['EV-2'], description: 'The final "data: [DONE]" is not followed by a blank line.' },
  'stream-wrong-chunk-object': { clauses: ['EV-3'], description: 'Chunks have object "chat.completion".' },
  'stream-delta-not-object': { clauses: ['EV-3'], description: 'Chunk delta is a string instead of an object.' },
  'stream-chunk-not-json': { clauses: ['EV-3'], description: 'A "data: hello" payload appears mid-stream.' },
  'stream-empty-content': { clauses: ['EV-4'], description: 'All content deltas are empty strings.' },
  'stream-no-finish-reason': { clauses: ['EV-5'], description: 'No chunk carries a finish_reason.' },
  'stream-two-finish-reasons': { clauses: ['EV-5'], description: 'Two chunks carry finish_reason "stop".' },
  'stream-content-after-finish': { clauses: ['EV-5'], description: 'A content chunk follows the finish_reason chunk.' },
  'stream-finish-length': { clauses: ['EV-5'], description: 'A normal short stream finishes with "length".' },
  'stream-no-done': { clauses: ['EV-6'], description: 'The stream ends without data: [DONE].' },
  'stream-data-after-done': { clauses: ['EV-6'], description: 'Another chunk follows data: [DONE].' },
  'stream-stalls': { clauses: ['EV-10'], description: 'After two chunks nothing more is sent; the socket stays open.' },
  'stream-never-closes': { clauses: ['EV-10', 'EV-6'], description: 'data: [DONE] is sent but the response is never ended.' },
  'stream-ids-change': { clauses: ['EV-7'], description: 'Every chunk of a stream has a different id.' },
  'stream-id-no-prefix': { clauses: ['EV-7'], description: 'Chunk ids are "cmpl-..." (the same on every chunk).' },
  'stream-no-role': { clauses: ['EV-8'], description: 'No delta carries role "assistant".' },
  'stream-named-event': { clauses: ['EV-11'], description: 'Every event carries "event: chunk".' },
  // --- streaming: deltas that are snapshots ----------------------------------------
  'cumulative-deltas': { clauses: ['EV-12'], description: 'Every content delta of a stream is the reply so far ("Alpha", "Alpha bravo", ...), as fronts that re-emit the whole reply do.' },

  // --- error bodies ---------------------------------------------------------------
  'error-missing-type': { clauses: ['ERR-1'], description: 'Error bodies lack error.type.' },
  'error-missing-code': { clauses: ['ERR-1'], description: 'Error bodies lack error.code.' },
  'error-code-null': { clauses: ['ERR-1', 'ERR-3'], description: 'Error bodies have error.code null.' },
  'error-message-not-string': { clauses: ['ERR-1'], description: 'error.message is an object instead of a string.' },
  'error-flat': { clauses: ['ERR-1'], description: 'Error bodies are {"message", "type", "code"} without the error wrapper.' },
  'error-empty-message': { clauses: ['ERR-3'], description: 'error.message is "".' },
  'error-html': { clauses: ['ERR-1'], description: 'Errors are served as text/html pages.' },

  // --- unavailable endpoints ------------------------------------------------------
  'images-200': { clauses: ['UNAV-1', 'SVC-6'], description: 'The image endpoints answer 200 with a fake image.' },
  'videos-200': { clauses: ['UNAV-2', 'SVC-6'], description: 'The video endpoints answer 200 with a fake job.' },
  'unknown-path-200': { clauses: ['UNAV-3'], description: 'Unknown paths answer 200 {}.' },
  'route-unanchored': { clauses: ['UNAV-3'], description: 'Routes match anywhere in the path: POST /brains/{id}/chat/x, /x/v1/brains/{id}/chat and /x/v1/models/{id} are served as the brain and model routes (an unanchored route pattern).' },
  'unknown-path-404-no-body': { clauses: ['UNAV-3', 'ERR-1'], description: 'Unknown (and unavailable) paths answer 404 with an empty body.' },

  // --- rate limits ----------------------------------------------------------------
  'ratelimit-429-plain-text': { clauses: ['LIM-1', 'ERR-1'], description: '429 answers are text/plain.' },
  'ratelimit-429-no-body': { clauses: ['LIM-1', 'ERR-1'], description: '429 answers have an empty body.' },
  'ratelimit-as-500': { clauses: ['LIM-1', 'ERR-2'], description: 'Past the rate limit the answer is 500.' },
  'ratelimit-drops-connection': { clauses: ['LIM-1'], description: 'Past the rate limit the socket is destroyed without an answer.' },
  'ratelimit-no-retry-after': { clauses: ['LIM-2'], description: '429 answers carry no Retry-After, retry-after-ms or x-ratelimit-* headers.' },
  'ratelimit-never-recovers': { clauses: ['LIM-3'], description: 'Once throttled, a key stays throttled for the life of the server.' },

  // --- overload -------------------------------------------------------------------
  'overload-503-no-body': { clauses: ['ERR-4', 'ERR-1'], description: 'Every 5th chat request (and overload) is answered 503 with an empty body.' },
  'overload-500': { clauses: ['ERR-2'], description: 'Overload (and every 5th chat request) is answered 500 instead of 503.' },

  // --- the streaming path ---------------------------------------------------------
  // Real servers route stream: true through other code (another handler, auth middleware,
  // validator, lookup). Each of these breaks one probe in its streaming form only: the
  // plain form of the same probe still passes.
  'stream-auth-near-miss-accepted': { clauses: ['AUTH-2'], description: 'On stream: true requests keys are compared without case: the upper-cased key is accepted (plain requests still refuse it).' },
  'stream-validated-before-auth': { clauses: ['AUTH-4'], description: 'stream: true requests are validated (body, model, brain) before the key: no key or an unknown key with an unknown model or brain gets 400/404, not 401.' },
  'stream-scope-on-plain-model': { clauses: ['AUTH-7'], description: 'On stream: true requests a key without brains:invoke gets 403 on plain service models too.' },
  'stream-unknown-model-accepted': { clauses: ['CHAT-7'], description: 'On stream: true requests an unknown model is served (200, a stream).' },
  'stream-content-type-unchecked': { clauses: ['CHAT-4'], description: 'On stream: true requests message content of an invalid type (a number, an object without parts) is served.' },
  'stream-unknown-brain-accepted': { clauses: ['BRAIN-3'], description: 'On stream: true requests any well-formed uuid is an existing brain, on both routes.' },

  // --- what the fixed probes meet -------------------------------------------------
  'auth-key-in-header-accepted': { clauses: ['AUTH-1'], description: 'Without an Authorization header, a valid key in x-api-key or api-key is accepted.' },
  'auth-key-in-query-accepted': { clauses: ['AUTH-1'], description: 'Without an Authorization header, a valid key in ?api_key= or ?key= is accepted.' },
  'auth-key-scheme-accepted': { clauses: ['AUTH-3'], description: 'A valid key under the schemes Key, Api-Key or ApiKey is accepted (Basic and Token are still refused).' },
  'auth-key-prefix-compare': { clauses: ['AUTH-2'], description: 'Keys are compared on their first 32 characters only: the key with its last character changed, or with characters appended, is accepted.' },
  'auth-key-case-insensitive': { clauses: ['AUTH-2'], description: 'Keys are compared without case: the upper-cased key is accepted.' },
  'auth-scheme-unanchored': { clauses: ['AUTH-3'], description: 'The Bearer pattern is not anchored at the start of the header: a valid key under a scheme that ends in "Bearer" (XBearer <key>) is accepted.' },
  'retry-after-unparseable': { clauses: ['LIM-2'], description: '429 answers carry "Retry-After: soon" (retry-after-ms and x-ratelimit-reset-requests stay valid).' },
  'close-after-stream': { clauses: ['SVC-8'], description: 'After every stream the socket is closed without Connection: close (half-close once the response is sent).' },
  'models-no-list': { clauses: ['SVC-2', 'MOD-1'], description: 'GET /models answers 200 {"object": "list"} with no data array.' },
  'error-code-numeric': { clauses: ['ERR-1'], description: 'error.code is a number (the HTTP status) in every error body.' },
  // --- misbehaving toward client libraries only ----------------------------------
  'client-libraries-500': { clauses: ['ERR-2'], description: 'Authenticated requests from OpenAI-style client libraries (x-stainless-* headers, OpenAI/JS or ai-sdk user agents) are answered 500.' },
  'key-echoed-to-clients': { clauses: ['AUTH-9'], description: 'Responses to client-library requests (x-stainless-* headers, OpenAI/JS or ai-sdk user agents) carry x-debug-key with the caller\'s full API key.' },
  // --- fuzz-only ------------------------------------------------------------------
  // Crashes and slips fixed probes never provoke; proven by selftest/e2e/fuzz-defects.test.ts.
  'fuzz-temperature-type-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'temperature of any type but number (a string, a boolean, an array) is answered 500.' },
  'fuzz-max-tokens-huge-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'max_tokens or max_completion_tokens of 65536 or more is answered 500.' },
  'fuzz-stop-array-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'stop given as an array is answered 500.' },
  'fuzz-deep-unknown-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'An unknown top-level field nested more than 8 levels deep is answered 500.' },
  'fuzz-developer-role-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'A message with role "developer" is answered 500.' },
  'fuzz-long-content-500': { clauses: ['ERR-2'], description: 'A message content string longer than 4096 characters is answered 500 (the near-limit conversation probe meets it; so does the fuzz phase).' },
  'fuzz-nul-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'A NUL character (U+0000) in any message text is answered 500.' },
  'fuzz-lone-surrogate-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'A lone UTF-16 surrogate (a \\ud800 escape) in any message text is answered 500.' },
  'fuzz-many-messages-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'More than 32 messages are answered 500.' },
  'fuzz-content-parts-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'Content given as an array of parts is answered 500.' },
  'fuzz-brain-tool-role-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'On POST /brains/{id}/chat, a message with role "tool" is answered 500.' },
  'fuzz-rtl-stream-no-done': { clauses: ['EV-6'], description: 'Streams whose request holds right-to-left text (Hebrew, Arabic, U+202E, U+200F) end without data: [DONE].' },
  'fuzz-messages-400-no-body': { clauses: ['CHAT-3', 'ERR-1'], foundBy: 'fuzz', description: 'messages given as a number, boolean or null is refused 400 with an empty body.' },
  'fuzz-model-bool-accepted': { clauses: ['CHAT-2'], foundBy: 'fuzz', description: 'model given as a boolean, null, an array or an object is served with svc-auto.' },
  'fuzz-later-content-accepted': { clauses: ['CHAT-4'], foundBy: 'fuzz', description: 'Content of an invalid type is accepted in any message but the first.' },
  'fuzz-stream-number-accepted': { clauses: ['CHAT-5'], foundBy: 'fuzz', description: 'stream given as a number, an object or an array is accepted (as false).' },
  'fuzz-trailing-garbage-accepted': { clauses: ['CHAT-6'], foundBy: 'fuzz', description: 'A body that is a JSON object followed by other text is read up to its last "}" (lenient parse).' },
  // The coverage phase's: a wrong type, a range's top, an empty string; and a shrink budget spent by two noisy clauses.
  'fuzz-temperature-string-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'temperature given as a string ("0.7", "") is answered 500 (numbers, null and other types are fine).' },
  'fuzz-top-p-max-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'top_p of exactly 1, the top of its documented range, is answered 500.' },
  'fuzz-stop-empty-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'stop given as the empty string (or an array holding one) is answered 500.' },
  'fuzz-noisy-three-clauses': { clauses: ['ERR-2', 'ERR-1', 'CHAT-6'], foundBy: 'fuzz', description: 'Three bugs at once: a message with a name is answered 500; a parameter value refused with 400 (temperature above 2, n above 8, ...) is refused text/plain; a body that is not JSON, starts with "{" and has more "}" than "{" (trailing garbage after the object) is refused 400 text/plain.' },
  // --- a wire breach the client libraries tolerate (llama.cpp's llama-server answers 401 so) ---
  'auth-401-code-numeric': { clauses: ['ERR-1'], description: '401 error bodies carry error.code as an integer (401); every other member, and every other error body, stays conformant.' },
  // --- error bodies real gateways send, that every client library still raises its typed error on (the client cells judge the client) ---
  'errors-4xx-plain-text': { clauses: ['AUTH-1', 'CHAT-2', 'ERR-1'], description: '401 and 400 answers are text/plain: "Unauthorized" and the error\'s message as text (the status stays right).' },
  'errors-4xx-string-error': { clauses: ['AUTH-1', 'CHAT-2', 'ERR-1'], description: '401 and 400 bodies are {"error": "<message>"} as application/json: a string, not an error object (the status stays right).' },
  // --- every success judged, varied requests, EV-6 after [DONE], EV-12 as gateways send it, AUTH-5's body ---
  'snapshot-deltas-gateway': { clauses: ['EV-12'], description: 'Content deltas are snapshots ("Timber", "Timber meadow", "Timber meadow foxtrot", ...), then a closing chunk and the finish chunk each repeat the whole reply, as a real LLM gateway streams.' },
  'usage-data-after-done': { clauses: ['EV-6'], description: 'Streams asked for with stream_options.include_usage send the usage chunk again after data: [DONE]; other streams end cleanly.' },
  'empty-200-under-concurrency': { clauses: ['SVC-1'], description: 'Every 20th plain chat reply sent while another request is in flight is HTTP 200 with an empty body (Content-Length: 0), as a router in front of an upstream does under concurrent keep-alive traffic.' },
  'stream-401-plain-text': { clauses: ['AUTH-5'], description: 'Streaming requests with a missing or invalid key get 401 as text/plain "Unauthorized" (not an event stream, not JSON); plain requests get the JSON error body.' },
  'scope-gates-models': { clauses: ['AUTH-7'], description: 'GET /models answers 403 to a key without brains:invoke (chat with a plain model still works).' },
  'content-length-chars': { clauses: ['CHAT-1', 'SVC-1'], description: 'Replies quote the request\'s non-ASCII words (as a model answers in kind), and Content-Length counts characters instead of bytes: every non-ASCII reply arrives cut.' },
  'stream-utf8-split': { clauses: ['EV-4'], description: 'Streamed replies quote the request\'s non-ASCII words, each cut by bytes inside its first multi-byte character across two deltas, each half decoded alone (U+FFFD in the reply).' },
  'chunked-body-refused': { clauses: ['CHAT-1', 'SVC-5'], description: 'A request body sent with Transfer-Encoding: chunked (no Content-Length) is refused with 411 Length Required (RFC 9112 §6.1 requires a server to accept it).' },
  'oversize-drops-connection': { clauses: ['ERR-1'], description: 'A request body above the 1 MiB limit gets no answer: the connection is dropped.' },
  // --- under concurrency: whose reply, cancelled work, streams held back ---
  'replies-swapped-under-concurrency': { clauses: ['SVC-9'], description: 'A finished reply waits up to 100 ms in a result pool; the next reply finished while it waits (two or more requests in flight) takes its place, and the two are swapped whole: content, usage and id (a pool handing a reply to the wrong waiter).' },
  'reply-of-previous-request': { clauses: ['SVC-9'], description: 'Every chat reply is the one planned for the previous chat request (content, usage and id), whichever key sent it; the first gets its own (a reply cache keyed on the wrong thing, one request behind). No concurrency needed.' },
  'replies-swapped-after-cancel': { clauses: ['SVC-9'], description: 'The same swap, only after a client has gone away mid-reply (the March 2023 incident\'s shape); streams take 20 ms a chunk so a client can leave one.' },
  'cancelled-stream-keeps-slot': { clauses: ['SVC-10'], description: 'The engine model is on with 8 slots, and a cancelled stream keeps its slot, decoding to its end for nobody.' },
  'stream-buffered-until-end': { clauses: ['EV-13'], description: 'Streams of 48 words are generated at 30 ms a chunk and held, then delivered in one write at their end (a buffering proxy in front).' },
  // --- content, a stream's form, limits and routes as real servers meet them ---
  'finish-chunk-restates-reply': { clauses: ['EV-12'], description: 'Streams send ordinary deltas, then the finishing chunk repeats the whole reply in its delta.content (every client shows the reply twice).' },
  'capped-content-null': { clauses: ['RES-MSG-1', 'EV-4'], description: 'A request with max_tokens gets no text as a string: message.content null in a completion, no delta.content in any chunk of a stream (finish_reason "length").' },
  'ratelimit-stream-200-error': { clauses: ['LIM-1', 'EV-3'], description: 'A streaming request past the rate limit is answered 200 with an event stream whose one payload is an error object (then [DONE]); plain requests get the 429.' },
  'scope-skipped-on-route-spelling': { clauses: ['AUTH-6'], description: 'The router takes a route in any case, with doubled or trailing slashes and percent-encoded characters, but the brain route\'s scope check is bound to the exact path: a key without brains:invoke is served on POST /v1/Brains/{id}/Chat, /v1/brains/{id}//chat, /v1/brains/{id}/chat/.' },
  // --- a target that goes away mid-run (its own run self-test: later tests are errors, selftest/e2e/target-down.test.ts) ---
  'target-dies-mid-run': { clauses: ['SVC-1'], foundBy: 'outage', description: 'After 40 requests the server stops listening and drops every connection (as a process that runs out of memory): the request in flight is cut, every later one refused.' },
  // --- near misses of a valid request, read as valid: almost-JSON, keys in another case; and what only the coverage phase sends ---
  'almost-json-accepted': { clauses: ['CHAT-6'], description: 'Bodies a lenient parser accepts and RFC 8259 forbids are served: NaN and Infinity literals (read as null), single-quoted strings, trailing commas, // and /* */ comments.' },
  'keys-case-insensitive': { clauses: ['CHAT-2', 'CHAT-3', 'CHAT-4'], description: 'Keys are matched in any letter case when the exact one is absent (Go\'s encoding/json): "Model", "MESSAGES", a message\'s "Role" stand for model, messages, role.' },
  'fuzz-stop-length-500': { clauses: ['CHAT-8', 'ERR-2'], foundBy: 'fuzz', description: 'stop holding exactly 3 sequences is answered 500 (fewer or more are fine).' },
  'fuzz-dollar-key-500': { clauses: ['ERR-2'], foundBy: 'fuzz', description: 'A key starting with "$" inside a message (the message, a content part, its image_url, a tool call, its function) is answered 500, as a document store refuses operator keys.' },
} satisfies Record<string, DefectInfo>;

export type DefectName = keyof typeof CATALOG;

export const DEFECTS: Record<string, DefectInfo> = CATALOG;

/** The defects fixed probes are meant to catch (seeded-defects.test.ts); fuzz-only ones have their own self-test. */
export const PROBED_DEFECTS: Record<string, DefectInfo> = Object.fromEntries(Object.entries(CATALOG).filter(([, d]) => (d as DefectInfo).foundBy === undefined));

export function isDefectName(name: string): name is DefectName {
  return Object.prototype.hasOwnProperty.call(CATALOG, name);
}
