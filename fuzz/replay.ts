// The environment a replay command needs besides FUZZ_SEED and FUZZ_REPLAY: the target
// (the key masked as ***, the reader puts theirs) and everything the generators read
// (models, brain id, body cap), so the same case index and path give the same request.
// The extra HEADERS go along too (a gateway routes nothing without them), secret values as ***.
import { parseHeaderLines } from '../lib/http/header-lines.ts';

const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function replayPrefix(env: NodeJS.ProcessEnv): string {
  const parts: string[] = [];
  if (env.CHATGATE_EMBEDDED === '1') {
    // The embedded reference server: the runner starts a new one with the same defect/variants.
    if (env.REFERENCE_DEFECT) parts.push(`REFERENCE_DEFECT=${q(env.REFERENCE_DEFECT)}`);
    if (env.REFERENCE_VARIANTS) parts.push(`REFERENCE_VARIANTS=${q(env.REFERENCE_VARIANTS)}`);
  } else {
    if (env.TARGET_URL) parts.push(`TARGET_URL=${q(env.TARGET_URL)}`);
    parts.push('API_KEY=***');
    if (env.BRAIN_ID) parts.push(`BRAIN_ID=${q(env.BRAIN_ID)}`);
  }
  if (env.HEADERS?.trim()) parts.push(`HEADERS=${shownHeaders(env.HEADERS)}`);
  if (env.HEADERS_FILE?.trim()) parts.push(`HEADERS_FILE=${q(env.HEADERS_FILE.trim())}`);
  if (env.MODELS) parts.push(`MODELS=${q(env.MODELS)}`);
  if (env.FUZZ_MAX_BODY_BYTES) parts.push(`FUZZ_MAX_BODY_BYTES=${q(env.FUZZ_MAX_BODY_BYTES)}`);
  return parts.length ? `${parts.join(' ')} ` : '';
}

/** HEADERS for a shell line ($'a: 1\nb: ***'): secret values masked, one header a line. */
function shownHeaders(raw: string): string {
  const parsed = parseHeaderLines(raw);
  const lines = 'problem' in parsed ? ['***'] : parsed.headers.map((h) => `${h.name}: ${h.secret ? '***' : h.value}`);
  return `$'${lines.map((l) => l.replace(/\\/g, '\\\\').replace(/'/g, "\\'")).join('\\n')}'`;
}
