// Shared by the k6 merge self-tests: the k6-operator's segment arguments, and finding a
// binary (k6-sse, prometheus) the way the other k6 self-tests do.
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The k6-operator's arguments for runner `index` (1-based) of `total` (its pkg/segmentation NewCommandFragments). */
export function operatorSegmentArgs(index: number, total: number): string[] {
  const part = (i: number) => (i === 0 ? '0' : i === total ? '1' : `${i}/${total}`);
  const seq = ['0', ...Array.from({ length: total - 1 }, (_, i) => `${i + 1}/${total}`), '1'].join(',');
  return [`--execution-segment=${part(index - 1)}:${part(index)}`, `--execution-segment-sequence=${seq}`];
}

function executable(file: string | undefined): string | undefined {
  if (!file) return undefined;
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return undefined;
  }
}

/** $envVar if set (and executable), else the first `name` on PATH, else the fixed fallbacks. */
export function findBin(name: string, envVar: string, fallbacks: string[] = []): string | undefined {
  if (process.env[envVar]) return executable(process.env[envVar]);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const found = dir ? executable(join(dir, name)) : undefined;
    if (found) return found;
  }
  for (const f of fallbacks) if (executable(f)) return f;
  return undefined;
}
