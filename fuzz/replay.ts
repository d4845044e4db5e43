// The environment a replay command needs besides FUZZ_SEED and FUZZ_REPLAY: the target
// (the key masked as ***, the reader puts theirs) and everything the generators read
// (models, brain id, body cap), so the same case index and path give the same request.
// The target, brain, models and body cap come from the run context (lib/run/run-context.ts);
// the extra HEADERS from the environment, where they stay (a gateway routes nothing
// without them), secret values as ***.
import { parseHeaderLines } from '../lib/http/header-lines.ts';
import { defaultRunContext, runContext, type RunContext } from '../lib/run/run-context.ts';

const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function replayPrefix(env: NodeJS.ProcessEnv, context: RunContext = runContext(env)): string {
  const parts: string[] = [];
  const target = context.target;
  if (target?.embedded) {
    // The embedded reference server: the runner starts a new one with the same defect/variants.
    if (target.embedded.defect) parts.push(`REFERENCE_DEFECT=${q(target.embedded.defect)}`);
    if (target.embedded.variants?.length) parts.push(`REFERENCE_VARIANTS=${q(target.embedded.variants.join(','))}`);
  } else {
    if (target) parts.push(`TARGET_URL=${q(target.url)}`);
    parts.push('API_KEY=***');
    if (context.brainId) parts.push(`BRAIN_ID=${q(context.brainId)}`);
  }
  if (env.HEADERS?.trim()) parts.push(`HEADERS=${shownHeaders(env.HEADERS)}`);
  if (env.HEADERS_FILE?.trim()) parts.push(`HEADERS_FILE=${q(env.HEADERS_FILE.trim())}`);
  // Knobs at their defaults need no mention: the replay gets the same without them.
  const defaults = defaultRunContext();
  if (context.models.join(',') !== defaults.models.join(',')) parts.push(`MODELS=${q(context.models.join(','))}`);
  if (context.fuzz.maxBodyBytes !== defaults.fuzz.maxBodyBytes) parts.push(`FUZZ_MAX_BODY_BYTES=${context.fuzz.maxBodyBytes}`);
  return parts.length ? `${parts.join(' ')} ` : '';
}

/** HEADERS for a shell line ($'a: 1\nb: ***'): secret values masked, one header a line. */
function shownHeaders(raw: string): string {
  const parsed = parseHeaderLines(raw);
  const lines = 'problem' in parsed ? ['***'] : parsed.headers.map((h) => `${h.name}: ${h.secret ? '***' : h.value}`);
  return `$'${lines.map((l) => l.replace(/\\/g, '\\\\').replace(/'/g, "\\'")).join('\\n')}'`;
}
