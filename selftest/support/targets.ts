// Starts a target in this process and gives the environment that points the suite at
// it as a remote target (TARGET_URL + keys), the way a platform team runs it.
import { startReferenceServer, type ReferenceOptions } from '../../reference/server.ts';

export interface RunningTarget { env: Record<string, string>; keys: string[]; close(): Promise<void> }

export async function referenceTarget(opts: ReferenceOptions = {}): Promise<RunningTarget> {
  const ref = await startReferenceServer(opts);
  return {
    env: {
      TARGET_URL: ref.url, API_KEY: ref.keys.main, LIMITED_API_KEY: ref.keys.limited,
      RATE_LIMIT_API_KEY: ref.keys.rateLimit, BRAIN_ID: ref.brainId,
    },
    keys: Object.values(ref.keys),
    close: () => ref.close(),
  };
}
