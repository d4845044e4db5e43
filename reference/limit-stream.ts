// ratelimit-stream-200-error: an over-limit streaming request is answered 200 with an
// event stream whose one payload is an error object (then [DONE]), as some gateways
// report a limit met once the stream has started, instead of a 429.
// Stryker disable all: [gate] ratelimit-stream-200-error LIM-1 EV-3
export function limitAsStreamEvent(): string {
  const error = { error: { message: 'Rate limit reached for this API key. Retry later.', type: 'rate_limit_error', code: 'rate_limit_exceeded' } };
  return `data: ${JSON.stringify(error)}\n\ndata: [DONE]\n\n`;
}
