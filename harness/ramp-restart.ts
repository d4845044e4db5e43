// When the rate-limit probe ramps a second time: a 429 came before any stream was served
// (the run's own traffic had spent a budget the keys share), so EV-3 and the streaming
// side of LIM-1 had nothing to judge; it waits the advised time and ramps once more,
// starting with a stream, while the probe's budget of requests allows.

export interface RampAnswer { stream: boolean; status?: number }

/** The 429 the probe waits out before its second ramp, or undefined: no restart. */
export function restartAfter<T extends RampAnswer>(answers: readonly T[], sent: number, max: number): T | undefined {
  if (sent >= max) return undefined;
  const first429 = answers.findIndex((a) => a.status === 429);
  if (first429 < 0) return undefined;
  const firstStream = answers.findIndex((a) => a.stream && a.status !== undefined && a.status < 300);
  return firstStream >= 0 && firstStream < first429 ? undefined : answers[first429];
}
