// Datasets from a file, parsed from its text (the caller reads the file): OpenAI chat
// JSONL ({"messages": [...]}), ShareGPT conversations ({"conversations": [{"from":
// "human", "value": ...}, ...]}), plain prompts (JSONL {"prompt": ..., "output_tokens"?:
// n}, or a .txt file with one prompt per line). The records come one per line (JSONL) or
// as one JSON array (vLLM's ShareGPT download), told apart by the file's first character. All become conversations: an optional
// system prompt and user turns, each with the dataset's own reply and asked length when
// it has them. A line that is not one of these is an error naming the file and line.
import { inputError } from './input-error.ts';

export const DATASET_FORMATS = ['auto', 'openai', 'sharegpt', 'prompts', 'text'] as const;
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

export interface Turn {
  user: string;
  /** The dataset's assistant reply after this turn (its length is the asked output when no output_tokens is given). */
  reply?: string;
  /** max_tokens to ask for this turn. */
  outputTokens?: number;
}

export interface Conversation {
  system?: string;
  turns: Turn[];
}

const FIX = {
  openai: 'each line must be {"messages": [{"role": "user", "content": "..."}, ...]}',
  sharegpt: 'each line must be {"conversations": [{"from": "human", "value": "..."}, {"from": "gpt", "value": "..."}]}',
  prompts: 'each line must be {"prompt": "...", "output_tokens": 128} (output_tokens optional)',
};

/** Conversations of a dataset; `skipped`: records of a JSON array without a user turn (vLLM drops them too). */
export type Dataset = Conversation[] & { skipped?: number };

/** Parses a dataset file's text; `source` (the path) names it in errors. */
export function parseDataset(text: string, source: string, format: DatasetFormat = 'auto'): Dataset {
  if (format === 'text' || (format === 'auto' && /\.txt$/i.test(source))) {
    const out = text.split(/\r?\n/).filter((l) => l.trim() !== '').map((l) => ({ turns: [{ user: l }] }));
    if (out.length === 0) throw inputError(source, 0, 'the file holds no prompt', 'write one prompt per line');
    return out;
  }
  if (/^\uFEFF?\s*\[/.test(text)) return parseArray(text, source, format);
  const out: Conversation[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    const n = i + 1;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      if (line === '{' && isJson(text)) throw inputError(source, 0, 'is one JSON object, neither JSONL (one record per line) nor a JSON array of records', `write one record per line, or put the records in one array [...]; ${format === 'auto' ? FIX.openai : FIX[format]}`);
      throw inputError(source, n, 'not a JSON object (JSONL: one object per line)', format === 'auto' ? FIX.openai : FIX[format]);
    }
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw inputError(source, n, 'not a JSON object', format === 'auto' ? FIX.openai : FIX[format]);
    out.push(record(doc as Record<string, unknown>, source, n, format));
  }
  if (out.length === 0) throw inputError(source, 0, 'the file holds no record', format === 'auto' ? FIX.openai : FIX[format]);
  return out;
}

function record(d: Record<string, unknown>, source: string, n: number, format: DatasetFormat): Conversation {
  const kind = format !== 'auto' ? format : 'messages' in d ? 'openai' : 'conversations' in d ? 'sharegpt' : 'prompt' in d ? 'prompts' : undefined;
  if (!kind) throw inputError(source, n, 'has none of "messages", "conversations", "prompt"', `${FIX.openai}, or ShareGPT's "conversations", or {"prompt": "..."}`);
  return kind === 'openai' ? fromMessages(d, source, n) : kind === 'sharegpt' ? fromShareGpt(d, source, n) : fromPrompt(d, source, n);
}

/** A JSON array of records (vLLM's ShareGPT file); errors name the record as file[index]. */
function parseArray(text: string, source: string, format: Exclude<DatasetFormat, 'text'>): Dataset {
  const fix = (format === 'auto' ? FIX.openai : FIX[format]).replace('each line must be', 'each array element must be');
  let docs: unknown;
  try {
    docs = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw inputError(source, 0, `starts with "[" but is not valid JSON (${(e as Error).message})`, `a JSON array dataset must be one array of records; ${fix}`);
  }
  if (!Array.isArray(docs)) throw inputError(source, 0, 'is not a JSON array', fix);
  const out: Dataset = [];
  let skipped = 0;
  docs.forEach((doc, k) => {
    const at = `${source}[${k}]`;
    if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw inputError(at, 0, 'is not a JSON object', fix);
    const d = doc as Record<string, unknown>;
    // The ShareGPT download holds empty conversations and ones without a human turn: skipped, counted.
    if (Array.isArray(d.conversations) && !d.conversations.some((m) => /^(human|user)$/i.test(String((m as { from?: unknown } | null)?.from)))) {
      skipped++;
      return;
    }
    out.push(record(d, at, 0, format));
  });
  if (out.length === 0) throw inputError(source, 0, skipped ? `none of its ${skipped} records has a user turn` : 'the array holds no record', fix);
  if (skipped) out.skipped = skipped;
  return out;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function fromMessages(d: Record<string, unknown>, source: string, n: number): Conversation {
  const messages = d.messages;
  if (!Array.isArray(messages)) throw inputError(source, n, '"messages" is not a list', FIX.openai);
  const entries = messages.map((m, k) => {
    if (!m || typeof m !== 'object') throw inputError(source, n, `messages[${k}] is not an object`, FIX.openai);
    const { role, content } = m as { role?: unknown; content?: unknown };
    const text = contentText(content);
    if (typeof role !== 'string' || text === undefined) throw inputError(source, n, `messages[${k}] needs a string "role" and a text "content"`, FIX.openai);
    return { role, text };
  });
  return conversation(entries, outputTokensOf(d, source, n, FIX.openai), source, n, FIX.openai);
}

function fromShareGpt(d: Record<string, unknown>, source: string, n: number): Conversation {
  const conv = d.conversations;
  if (!Array.isArray(conv)) throw inputError(source, n, '"conversations" is not a list', FIX.sharegpt);
  const roles: Record<string, string> = { human: 'user', user: 'user', gpt: 'assistant', assistant: 'assistant', chatgpt: 'assistant', bing: 'assistant', bard: 'assistant', system: 'system' };
  const entries = conv.map((m, k) => {
    const { from, value } = (m ?? {}) as { from?: unknown; value?: unknown };
    const role = typeof from === 'string' ? roles[from.toLowerCase()] : undefined;
    if (!role || typeof value !== 'string') throw inputError(source, n, `conversations[${k}] needs "from" (human, gpt or system) and a string "value"`, FIX.sharegpt);
    return { role, text: value };
  });
  return conversation(entries, outputTokensOf(d, source, n, FIX.sharegpt), source, n, FIX.sharegpt);
}

function fromPrompt(d: Record<string, unknown>, source: string, n: number): Conversation {
  if (typeof d.prompt !== 'string' || d.prompt === '') throw inputError(source, n, '"prompt" is not a non-empty string', FIX.prompts);
  const outputTokens = outputTokensOf(d, source, n, FIX.prompts);
  return { ...(typeof d.system === 'string' ? { system: d.system } : {}), turns: [{ user: d.prompt, ...(outputTokens !== undefined ? { outputTokens } : {}) }] };
}

function conversation(entries: Array<{ role: string; text: string }>, outputTokens: number | undefined, source: string, n: number, fix: string): Conversation {
  const c: Conversation = { turns: [] };
  const systems: string[] = [];
  for (const e of entries) {
    if (e.role === 'system' || e.role === 'developer') {
      if (c.turns.length === 0) systems.push(e.text);
    } else if (e.role === 'user') c.turns.push({ user: e.text });
    else if (e.role === 'assistant') {
      const last = c.turns[c.turns.length - 1];
      if (last && last.reply === undefined) last.reply = e.text;
    }
  }
  if (c.turns.length === 0) throw inputError(source, n, 'has no user message', fix);
  if (systems.length) c.system = systems.join('\n');
  if (outputTokens !== undefined) c.turns[0]!.outputTokens = outputTokens;
  return c;
}

function outputTokensOf(d: Record<string, unknown>, source: string, n: number, fix: string): number | undefined {
  const v = d.output_tokens ?? d.max_tokens;
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw inputError(source, n, `output_tokens ${JSON.stringify(v)} is not a whole number of at least 1`, fix);
  return v;
}

function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts: string[] = [];
  for (const p of content) {
    if (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string') texts.push((p as { text: string }).text);
  }
  return texts.length ? texts.join('\n') : undefined;
}
