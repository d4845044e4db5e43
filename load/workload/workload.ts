// What each request says: its messages, its max_tokens and the tokenizer's count of
// what it sends. One of: the fixed --prompt (the default), synthetic prompts of a
// length drawn from a distribution, a dataset, or a trace's lengths; optionally a
// shared prefix (one system prompt for every request, so prefix caching is measured)
// and multi-turn sessions (each turn carries the conversation so far, the replies as
// the target gave them). Plain module (no Node APIs): k6 may bundle it.
import { CANARY_PATTERN, canariesIn, canaryFor } from '../../lib/spec/rules/cross-talk.ts';
import { seededRandom } from '../../lib/run/seeded-random.ts';
import { describeDistribution, lengthSampler, type LengthDistribution } from './distribution.ts';
import { SyntheticText } from './synthetic.ts';
import type { TextSource } from './synthetic-words.ts';
import type { Tokenizer } from './tokenizer.ts';
import type { Conversation } from './dataset.ts';
import type { TraceRecord } from './trace.ts';

export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

export interface WorkloadSpec {
  seed: number;
  /** Counts what is sent (and received without usage) and builds synthetic prompts; undefined = --tokenizer none. */
  tokenizer?: Tokenizer;
  /** Builds synthetic prompts where there is no tokenizer to check them (k6: synthetic-words.ts). */
  text?: TextSource;
  /** Seed of the length draws when it is not `seed` (k6: one per VU, or every VU would draw the same lengths). */
  lengthSeed?: number;
  /** The fixed prompt, when nothing else says what to send. */
  prompt: string;
  promptTokens?: LengthDistribution;
  outputTokens?: LengthDistribution;
  /** --max-tokens: max_tokens of every request unless the workload asks its own length. */
  maxTokens?: number;
  dataset?: { source: string; conversations: Conversation[] };
  /** Dataset: send every turn of a conversation (each carrying the ones before), not only the first. */
  multiTurn: boolean;
  /** Synthetic prompts: turns per session (1 = single requests). */
  turns: number;
  sharedPrefixTokens: number;
  /** Make every request's text its own (no response cache can serve it). */
  unique: boolean;
  /** With unique text: the request number carries a canary too (SVC-9: whose reply is whose); default on. */
  canaries?: boolean;
  trace?: { source: string; records: TraceRecord[] };
}

/** What the request carries about itself into its outcome, the recorder and requests.jsonl. */
export interface WorkMeta {
  /** Tokenizer's count of the message contents sent (chat-template tokens not included); undefined without a tokenizer. */
  promptTokens?: number;
  maxTokens?: number;
  session?: number;
  turn?: number;
  /** The canary the request's text carries (SVC-9). */
  canary?: string;
  /** Canaries its earlier messages hold (a session's history): a reply repeating them is not another's (SVC-9). */
  heldCanaries?: string[];
}

export interface WorkItem extends WorkMeta {
  messages: ChatMessage[];
  /** Keep the reply's text (multi-turn history, or counting it when the target sends no usage). */
  keepReply: boolean;
}

interface Session {
  id: number;
  history: ChatMessage[];
  /** Tokenizer count of the history's contents. */
  historyTokens: number;
  /** Index of the next turn. */
  next: number;
  conversation?: Conversation;
}

const TAIL_PATTERN = new RegExp(String.raw` \(request (\d+), code (${CANARY_PATTERN.source})\)`);

/** What makes request `seq`'s text its own, after the prompt: its number, and its canary when it has one. */
export function requestTail(seq: number, canary?: string): string {
  return canary ? ` (request ${seq}, code ${canary})` : ` (request ${seq})`;
}

/** The number and canary a text's request tail names, if it has one with a canary. */
export function parseRequestTail(text: string): { seq: number; canary: string } | undefined {
  const m = TAIL_PATTERN.exec(text);
  return m ? { seq: Number(m[1]), canary: m[2]! } : undefined;
}

export class Workload {
  private readonly synthetic: TextSource | undefined;
  private readonly drawPrompt: (() => number) | undefined;
  private readonly drawOutput: (() => number) | undefined;
  private readonly prefix: { text: string; tokens: number } | undefined;
  /** --prompt's token count, when a request's own words after it count apart (see next()). */
  private readonly promptCount: number | undefined;
  /** Sessions whose next turn is due (their previous turn answered). Bounded by the requests in flight. */
  private readonly ready: Session[] = [];
  private sessions = 0;

  constructor(readonly spec: WorkloadSpec) {
    const { tokenizer } = spec;
    const needsTokens = spec.promptTokens || spec.sharedPrefixTokens > 0 || spec.trace;
    if (needsTokens) this.synthetic = tokenizer ? new SyntheticText(tokenizer) : spec.text;
    if (needsTokens && !this.synthetic) throw new Error('synthetic prompts need a tokenizer');
    const lengthSeed = spec.lengthSeed ?? spec.seed;
    if (spec.promptTokens) this.drawPrompt = lengthSampler(spec.promptTokens, seededRandom(lengthSeed + 1));
    if (spec.outputTokens) this.drawOutput = lengthSampler(spec.outputTokens, seededRandom(lengthSeed + 2));
    // A request's text is --prompt and " (request N, code C)": where the tokenizer splits text
    // before " (", its count is the prompt's (counted once) plus the tail's, and only the tail is
    // counted per request. Every tail starts with " (request ", so one real tail shows whether
    // the split holds for all; where it does not, every text is counted whole.
    if (tokenizer && spec.unique) {
      const tail = requestTail(0, canaryFor(0, spec.seed));
      const n = tokenizer.count(spec.prompt);
      if (tokenizer.count(spec.prompt + tail) === n + tokenizer.count(tail)) this.promptCount = n;
    }
    if (spec.sharedPrefixTokens > 0) {
      const text = this.synthetic!.text(spec.sharedPrefixTokens, seededRandom(spec.seed + 3));
      this.prefix = { text, tokens: spec.sharedPrefixTokens };
    }
  }

  /** Longest reply any request may ask for (the embedded reference is told to answer that long). */
  maxOutputTokens(): number | undefined {
    const { spec } = this;
    let m = spec.outputTokens?.max;
    for (const r of spec.trace?.records ?? []) m = Math.max(m ?? 0, r.outputTokens);
    for (const c of spec.dataset?.conversations ?? []) for (const t of c.turns) if (t.outputTokens) m = Math.max(m ?? 0, t.outputTokens);
    return m;
  }

  /** For the plan and the summary. */
  describe(): Record<string, unknown> {
    const s = this.spec;
    const source = s.trace ? `trace ${s.trace.source} (${s.trace.records.length} records)` : s.dataset ? `dataset ${s.dataset.source} (${s.dataset.conversations.length} conversations${(s.dataset.conversations as { skipped?: number }).skipped ? `; ${(s.dataset.conversations as { skipped?: number }).skipped} without a user turn skipped` : ''})` : s.promptTokens ? 'synthetic' : 'fixed prompt';
    return {
      source,
      tokenizer: s.tokenizer?.name ?? 'none',
      ...(s.promptTokens ? { prompt_tokens: describeDistribution(s.promptTokens) } : {}),
      ...(s.outputTokens ? { output_tokens: describeDistribution(s.outputTokens) } : {}),
      ...(s.sharedPrefixTokens ? { shared_prefix_tokens: s.sharedPrefixTokens } : {}),
      ...(s.turns > 1 ? { turns: s.turns } : {}),
      ...(s.multiTurn ? { multi_turn: true } : {}),
      unique: s.unique,
      seed: s.seed,
    };
  }

  /** The request with this sequence number. */
  next(seq: number): WorkItem {
    const { spec } = this;
    const multi = spec.turns > 1 || (spec.multiTurn && spec.dataset !== undefined);
    const session = multi ? this.ready.shift() ?? this.startSession() : undefined;
    const turn = session ? session.next : 0;
    const conv = spec.dataset ? (session?.conversation ?? spec.dataset.conversations[seq % spec.dataset.conversations.length]!) : undefined;
    const t = conv?.turns[turn];
    const trace = spec.trace ? spec.trace.records[seq] ?? spec.trace.records[spec.trace.records.length - 1]! : undefined;

    // The new user message.
    let user: string;
    let userTokens: number | undefined;
    let canaryOf: string | undefined;
    const promptLen = trace?.promptTokens ?? (t ? undefined : this.drawPrompt?.());
    if (promptLen !== undefined) {
      // Unique: words drawn per request; otherwise the same words for the same length (a cache may serve them).
      user = this.synthetic!.text(promptLen, spec.unique ? seededRandom((spec.seed * 7919 + seq) >>> 0) : seededRandom(spec.seed));
      userTokens = promptLen;
    } else {
      user = t ? t.user : spec.prompt;
      const canary = spec.unique && spec.canaries !== false ? canaryFor(seq, spec.seed) : undefined;
      if (canary) canaryOf = canary;
      const tail = spec.unique ? requestTail(seq, canary) : '';
      userTokens = !t && tail && this.promptCount !== undefined ? this.promptCount + spec.tokenizer!.count(tail) : spec.tokenizer?.count(user + tail);
      user += tail;
    }

    let maxTokens = trace?.outputTokens ?? this.drawOutput?.() ?? t?.outputTokens;
    if (maxTokens === undefined && t?.reply !== undefined && spec.tokenizer) maxTokens = spec.tokenizer.count(t.reply);
    maxTokens ??= spec.maxTokens;
    if (maxTokens !== undefined && spec.maxTokens !== undefined) maxTokens = Math.min(maxTokens, spec.maxTokens);

    const messages: ChatMessage[] = [];
    let tokens = 0;
    const system = [this.prefix?.text, conv?.system].filter((x): x is string => x !== undefined && x !== '');
    if (system.length) {
      const text = system.join('\n');
      messages.push({ role: 'system', content: text });
      tokens += system.length === 1 && this.prefix && !conv?.system ? this.prefix.tokens : spec.tokenizer?.count(text) ?? 0;
    }
    let heldCanaries: string[] | undefined;
    if (session) {
      for (const m of session.history) messages.push(m);
      tokens += session.historyTokens;
      const held = session.history.flatMap((m) => canariesIn(m.content));
      if (held.length) heldCanaries = [...new Set(held)];
    }
    messages.push({ role: 'user', content: user });
    tokens += userTokens ?? 0;
    const item: WorkItem = {
      messages,
      keepReply: session !== undefined || spec.tokenizer !== undefined,
      ...(spec.tokenizer ? { promptTokens: tokens } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
      ...(session ? { session: session.id, turn } : {}),
      ...(canaryOf ? { canary: canaryOf } : {}),
      ...(heldCanaries ? { heldCanaries } : {}),
    };
    if (session) this.pending.set(seq, { session, user, userTokens: userTokens ?? 0, datasetReply: t?.reply });
    return item;
  }

  /** The answer to request `seq`: a session goes on with the reply it got (or ends when it failed or has no turn left). */
  done(seq: number, ok: boolean, reply: string | undefined): void {
    const p = this.pending.get(seq);
    if (!p) return;
    this.pending.delete(seq);
    const s = p.session;
    const answer = ok ? reply ?? p.datasetReply : undefined;
    const turns = s.conversation ? s.conversation.turns.length : this.spec.turns;
    if (answer === undefined || s.next + 1 >= turns) return; // session over: nothing of it is kept
    s.history.push({ role: 'user', content: p.user }, { role: 'assistant', content: answer });
    s.historyTokens += p.userTokens + (this.spec.tokenizer?.count(answer) ?? 0);
    s.next++;
    this.ready.push(s);
  }

  private readonly pending = new Map<number, { session: Session; user: string; userTokens: number; datasetReply?: string }>();

  private startSession(): Session {
    const id = this.sessions++;
    const ds = this.spec.dataset;
    const s: Session = { id, history: [], historyTokens: 0, next: 0 };
    if (ds) s.conversation = ds.conversations[id % ds.conversations.length]!;
    return s;
  }
}
