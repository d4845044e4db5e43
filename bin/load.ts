// `npm run load -- <scenario> [options]`: the load harness (load/run.ts). Exit codes:
// 0 ok, 1 regression or MUST-level finding, 2 bad option or configuration, 130 interrupted.
import { main } from '../load/run.ts';
import { redact } from '../lib/run/redact.ts';

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`chatgate load: could not complete the run: ${redact((err as Error)?.stack ?? String(err))}\n`);
    process.exit(2);
  },
);
