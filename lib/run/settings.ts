// The one table of npm test's settings: `npm test -- --help` prints it and
// docs/CONFIGURATION.md holds it (written by `npx tsx runner/configuration-doc.ts`;
// selftest/unit/settings.test.ts fails when the two differ, or when a variable
// loadConfig reads is missing here). lib/run/config.ts parses and validates them.

export interface Setting {
  /** The environment variable(s), as written in the docs. */
  name: string;
  meaning: string;
  default: string;
  /** A self-test seam, not for users: in the docs, not in --help. */
  seam?: true;
}

export const SETTINGS: readonly Setting[] = [
  { name: 'TARGET_URL', meaning: 'Base URL ending in `/v1`', default: 'unset: the embedded reference server on 127.0.0.1 (random port), with its own keys and brain' },
  { name: 'API_KEY', meaning: 'A key holding `brains:invoke`', default: 'required when `TARGET_URL` is set' },
  { name: 'LIMITED_API_KEY', meaning: 'A valid key lacking `brains:invoke` (otherwise like `API_KEY`)', default: 'unset: AUTH-6/AUTH-7 tests are `skip`, saying why' },
  { name: 'BRAIN_ID', meaning: 'uuid of an existing brain `API_KEY` may invoke', default: 'unset: brain tests that need it are `skip`' },
  { name: 'RATE_LIMIT_API_KEY', meaning: 'Key the rate-limit probe may exhaust (so other tests are not throttled)', default: '`API_KEY`' },
  { name: 'RATE_LIMIT_PROBE_MAX', meaning: 'Most requests the rate-limit probe sends (open-loop, `max_tokens: 1`, the rate doubling each second from 10 per second, at most 30 s; no 429 is `inconclusive`, naming the rate reached); `0` disables it', default: '300' },
  { name: 'MODELS', meaning: "Comma list of the service's model ids", default: '`svc-auto,svc`' },
  { name: 'TIMEOUT_MS', meaning: 'Limit for one request including its whole body or stream (100 to 3600000)', default: '30000' },
  { name: 'STRICT', meaning: '`1`: SHOULD-level warnings and flaky tests fail the run', default: 'unset' },
  { name: 'CLAUSES', meaning: 'Run only these clauses: ids or globs, comma-separated (`CLAUSES=\'AUTH-*,EV-1\'`)', default: 'all' },
  { name: 'RETRY_FAILED', meaning: 'Rerun each unexpected failure up to N times (0 to 10); a test that passes on a rerun is `flaky`', default: '0' },
  { name: 'EXPECTATIONS', meaning: 'A JSON or YAML file of known failures: clause id or test id -> reason (a ticket link)', default: 'unset' },
  { name: 'REPORTS_DIR', meaning: 'Where reports are written', default: '`reports`' },
  { name: 'HEADERS', meaning: 'Extra request headers, one `Name: value` a line, sent on every request of the run', default: 'none' },
  { name: 'HEADERS_FILE', meaning: 'A file of extra request headers, one `Name: value` a line (`#` lines are comments); adds to `HEADERS`', default: 'none' },
  { name: 'GITHUB_STEP_SUMMARY', meaning: 'Set by GitHub Actions: `summary.md` is appended to this file', default: 'unset' },
  { name: 'HTTPS_PROXY, HTTP_PROXY, NO_PROXY', meaning: "Forward proxy for the target's requests (lower-case names too, read as curl does)", default: 'unset' },
  { name: 'NODE_EXTRA_CA_CERTS', meaning: "PEM file of a private CA the target's certificate comes from (read by Node at start)", default: 'unset' },
  { name: 'FUZZ_RUNS', meaning: 'Generated requests of the fuzz phase (`suites/fuzz.test.ts`); `0` turns it off (its tests are `skip`)', default: '200' },
  { name: 'FUZZ_SEED', meaning: 'Seed of the fuzz phase, 0 to 2147483647; the same seed sends the same requests', default: 'random, printed on stderr and written to `results.json` `mode.fuzz.seed`' },
  { name: 'FUZZ_TIME_MS', meaning: 'Time cap of the fuzz phase: no new generated request after 3/4 of it, no shrinking after it', default: '60000' },
  { name: 'FUZZ_CONCURRENCY', meaning: 'Generated requests in flight at once', default: '4' },
  { name: 'FUZZ_MAX_BODY_BYTES', meaning: 'Largest generated body', default: '65536' },
  { name: 'FUZZ_REPLAY', meaning: "`<case>@<path>` from a fuzz failure's replay command (needs its `FUZZ_SEED`): the phase sends only that request", default: 'unset' },
  { name: 'REFERENCE_DEFECT, REFERENCE_VARIANTS', meaning: 'Embedded target only: switch on one seeded defect / a comma list of legal variants (`npm run reference -- --list`)', default: 'none' },
  { name: 'CHATGATE_SELFTEST_SUITES', meaning: "Self-test seam, not for users: a folder (relative to the project) whose `*.suite.ts` files are added to the run", default: 'none', seam: true },
  { name: 'CHATGATE_SELFTEST_PROGRESS', meaning: 'Self-test seam, not for users: `1` prints `chatgate: N tests done` on stderr each time a verdict reaches the runner, TTY or not', default: 'unset', seam: true },
  { name: 'CHATGATE_SELFTEST_CRASH', meaning: 'Self-test seam, not for users: `1` makes the runner crash after the tests ran (exit 3)', default: 'unset', seam: true },
];

export interface Argument { name: string; meaning: string }

export const ARGUMENTS: readonly Argument[] = [
  { name: '--update-expectations', meaning: 'Remove from the `EXPECTATIONS` file the known failures that passed; they then do not fail the run' },
  { name: '-t <regex>, --testNamePattern <regex>', meaning: "vitest's test-name filter, matched against `<describe names> <title>`; combined with `CLAUSES` (both must match); run-wide checks are kept when their title matches" },
  { name: 'file filters (`auth`, `clients/openai`)', meaning: "vitest's file filters: only suite files whose path contains one of them are loaded" },
  { name: '--list-tests', meaning: "Prints every test's stable id and title (for `EXPECTATIONS`), runs nothing; a probe without a streaming form says why" },
  { name: '--help', meaning: 'Prints these settings and arguments' },
];

const cell = (s: string) => s.replace(/\|/g, '\\|');
const code = (name: string) => name.split(', ').map((n) => (n.startsWith('`') ? n : `\`${n}\``)).join(', ');

/** The Markdown tables of docs/CONFIGURATION.md (the part generated from this file). */
export function settingsMarkdown(): string {
  return [
    '| Variable | Meaning | Default |', '|---|---|---|',
    ...SETTINGS.map((s) => `| ${code(s.name)} | ${cell(s.meaning)} | ${cell(s.default)} |`),
    '', 'Arguments (`npm test -- <arguments>`):', '',
    '| Argument | Meaning |', '|---|---|',
    ...ARGUMENTS.map((a) => `| ${a.name.startsWith('file') ? a.name : code(a.name.replace(/, /g, ', '))} | ${cell(a.meaning)} |`),
  ].join('\n');
}

/** `npm test -- --help`: the same table as plain text. */
export function helpText(): string {
  const plain = (s: string) => s.replace(/`/g, '');
  const rows = SETTINGS.filter((s) => !s.seam).map((s) => [s.name, `${plain(s.meaning)} (default: ${plain(s.default)})`] as const);
  const args = ARGUMENTS.map((a) => [plain(a.name), plain(a.meaning)] as const);
  const lines = (table: ReadonlyArray<readonly [string, string]>) => {
    const width = Math.max(...table.map(([n]) => n.length)) + 2;
    return table.map(([n, m]) => `  ${n.padEnd(width)}${m}`);
  };
  return [
    'Usage: npm test [-- [--update-expectations] [--list-tests] [-t <pattern>] [file filters...]]',
    '       (conformance run; configuration from the environment: docs/CONFIGURATION.md)',
    '', ...lines(rows), '', ...lines(args), '',
    'Exit codes: 0 pass, 1 conformance failure or unexpected pass, 2 configuration error,',
    '  3 the runner crashed (reports say what happened), 130/143 interrupted by SIGINT/SIGTERM (reports of what completed).',
  ].join('\n');
}
