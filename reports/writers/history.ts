// Keeps the previous runs: reports/latest/ is copied to reports/runs/<timestamp>/
// and only the newest KEEP runs are kept.
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export const KEEP_RUNS = 20;

export function archiveRun(reportsDir: string, latestDir: string, startedAt: string, keep = KEEP_RUNS): string {
  const runs = join(reportsDir, 'runs');
  mkdirSync(runs, { recursive: true });
  const dest = join(runs, startedAt.replace(/[:.]/g, '-'));
  cpSync(latestDir, dest, { recursive: true });
  const all = readdirSync(runs).sort();
  for (const old of all.slice(0, Math.max(0, all.length - keep))) rmSync(join(runs, old), { recursive: true, force: true });
  return dest;
}
