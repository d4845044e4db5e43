// The bench's stream, byte for byte: the SSE events the stream responder writes (one
// network piece per event) and the driver-work bench feeds to the driver without
// sockets. One source, so both measure the same bytes.

const chunk = (delta: Record<string, unknown>, finish: string | null, usage: unknown = null) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'svc-auto', choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], usage })}\n\n`;

/** The SSE text of one stream of `tokens` content chunks: [first, next, tail]. */
export function streamEvents(tokens: number): { first: string; next: string; tail: string } {
  return {
    first: chunk({ role: 'assistant', content: 'Token' }, null),
    next: chunk({ content: ' token' }, null),
    // The finish chunk, the usage chunk and [DONE] leave in one piece.
    tail: chunk({}, 'stop')
      + `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'svc-auto', choices: [], usage: { prompt_tokens: 9, completion_tokens: tokens, total_tokens: 9 + tokens } })}\n\n`
      + 'data: [DONE]\n\n',
  };
}

/** One stream as the responder writes it, one Buffer per network piece. */
export function streamPieces(tokens: number): Buffer[] {
  const { first, next, tail } = streamEvents(tokens);
  const pieces = [Buffer.from(first)];
  for (let i = 1; i < tokens; i++) pieces.push(Buffer.from(next));
  pieces.push(Buffer.from(tail));
  return pieces;
}
