// k6's duration form ("1m30s", "500ms") in milliseconds. No imports and no __ENV, so
// the Node reports (a merged run's CHANGE_AT, load/report/k6-slices-html.ts) read it too.
export function durationMs(d: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  let ms = 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(d)) !== null) ms += Number(m[1]) * units[m[2]!]!;
  return ms;
}
