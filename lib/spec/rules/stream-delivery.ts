// EV-13: a stream is delivered as it is generated. A buffering proxy (nginx's
// proxy_buffering on, a compressing middlebox) holds every chunk and hands them over
// at the end: each chunk is a valid event, only their arrival times show it. One
// function of a stream's content-chunk arrival times, for the suite, the load harness
// and k6. No imports: the k6 bundles take this module whole.

/** Content chunks a stream needs before its delivery is judged. */
export const DELIVERY_MIN_CHUNKS = 32;
/** End-to-end time a stream needs before its delivery is judged, ms. */
export const DELIVERY_MIN_E2E_MS = 1000;
/** All content inside this last share of the stream's time counts as one burst. */
export const DELIVERY_LAST_SHARE = 0.1;
/** ... when it came in at most this many reads. */
export const DELIVERY_MAX_READS = 2;

export interface DeliveryChunk {
  /** ms since the request was sent. */
  atMs: number;
  /** Which socket read delivered it (chunks of one read share it); absent: grouped by arrival time. */
  read?: number;
}

export interface DeliveryJudgement {
  verdict: 'streamed' | 'burst' | 'inconclusive';
  contentChunks: number;
  /** Request sent to the last content chunk, ms. */
  e2eMs: number;
  /** First to last content chunk, ms. */
  spreadMs: number;
  /** Reads that delivered the content. */
  reads: number;
  /** inconclusive: why; burst: what was seen. */
  why?: string;
}

/** Reads among the chunks: their read ids, or, without those, arrivals less than 1 ms apart as one read. */
export function countReads(chunks: readonly DeliveryChunk[]): number {
  if (chunks.length === 0) return 0;
  if (chunks.every((c) => c.read !== undefined)) return new Set(chunks.map((c) => c.read)).size;
  const times = chunks.map((c) => c.atMs).sort((a, b) => a - b);
  let reads = 1;
  for (let i = 1; i < times.length; i++) if (times[i]! - times[i - 1]! >= 1) reads++;
  return reads;
}

/** Judges one stream's delivery from its content chunks' arrivals (request sent = 0 ms). */
export function judgeDelivery(chunks: readonly DeliveryChunk[]): DeliveryJudgement {
  const n = chunks.length;
  return judgeDeliveryFigures({
    contentChunks: n,
    firstMs: n ? Math.min(...chunks.map((c) => c.atMs)) : 0,
    lastMs: n ? Math.max(...chunks.map((c) => c.atMs)) : 0,
    reads: countReads(chunks),
  });
}

/** The same from a stream's figures (the load harness keeps no chunk list): first and last content (ms from the send), reads with content. */
export function judgeDeliveryFigures(f: { contentChunks: number; firstMs: number; lastMs: number; reads: number }): DeliveryJudgement {
  const n = f.contentChunks;
  const first = f.firstMs;
  const last = f.lastMs;
  const reads = f.reads;
  const base = { contentChunks: n, e2eMs: last, spreadMs: last - first, reads };
  if (n < DELIVERY_MIN_CHUNKS) return { ...base, verdict: 'inconclusive', why: `a short stream (${n} content chunks, fewer than ${DELIVERY_MIN_CHUNKS}): a short reply may legally arrive in one piece` };
  if (last < DELIVERY_MIN_E2E_MS) return { ...base, verdict: 'inconclusive', why: `a fast stream (${Math.round(last)} ms end to end, under ${DELIVERY_MIN_E2E_MS} ms): a fast writer may legally fill one read` };
  const burst = first >= last * (1 - DELIVERY_LAST_SHARE) && reads <= DELIVERY_MAX_READS;
  if (!burst) return { ...base, verdict: 'streamed' };
  return {
    ...base, verdict: 'burst',
    why: `all ${n} content chunks arrived in the last ${Math.round(last - first)} ms of ${Math.round(last)} ms (${reads} read${reads === 1 ? '' : 's'}): held back until the end, as a buffering proxy does`,
  };
}
