// The start-the-target phase of npm test: TARGET_URL as configured, or the embedded
// reference server on 127.0.0.1 with its own keys and brain (REFERENCE_DEFECT,
// REFERENCE_VARIANTS). What the workers are told about it goes in the run context.
import { EMBEDDED_KEY_VARIABLES, keyVariables, type TargetRef } from '../lib/run/run-context.ts';
import { checkReferenceNames } from '../lib/run/config.ts';
import { registerRunSecrets } from '../lib/http/extra-headers.ts';
import { bypassProxyFor } from '../lib/http/proxy.ts';
import { orConfigError, type Plan } from './configure.ts';

export interface Target {
  /** What the workers are told (keys only by the variable holding them). */
  ref: TargetRef;
  /** BRAIN_ID, or the embedded reference's brain. */
  brainId?: string;
  /** How the reports name the target. */
  label: string;
  stop(): Promise<void>;
}

export async function startTarget({ config }: Plan): Promise<Target> {
  if (config.targetUrl) {
    return { ref: { url: config.targetUrl, keys: keyVariables(config) }, brainId: config.brainId, label: config.targetUrl, stop: async () => {} };
  }
  const { startReferenceServer } = await import('../reference/server.ts');
  const { DEFECTS } = await import('../reference/defects.ts');
  const { VARIANTS } = await import('../reference/variants.ts');
  await orConfigError(() => checkReferenceNames(config.reference, { defects: Object.keys(DEFECTS), variants: Object.keys(VARIANTS) }));
  const { defect, variants } = config.reference;
  const ref = await startReferenceServer({ ...(defect ? { defect } : {}), ...(variants.length ? { variants } : {}) });
  bypassProxyFor(new URL(ref.url).hostname); // our own loopback server: never through a proxy
  registerRunSecrets(ref.keys);
  // Its keys stay in this process's environment (the workers inherit it); the run context names them.
  Object.assign(process.env, {
    [EMBEDDED_KEY_VARIABLES.main]: ref.keys.main, [EMBEDDED_KEY_VARIABLES.limited]: ref.keys.limited,
    [EMBEDDED_KEY_VARIABLES.rateLimit]: ref.keys.rateLimit,
  });
  const extras = [defect && `defect ${defect}`, variants.length && `variants ${variants.join(',')}`].filter(Boolean);
  return {
    // Replay commands of the fuzz phase name the defect/variants, not this URL.
    ref: { url: ref.url, keys: { ...EMBEDDED_KEY_VARIABLES }, embedded: { ...(defect ? { defect } : {}), ...(variants.length ? { variants } : {}) } },
    brainId: ref.brainId,
    label: `embedded reference server ${ref.url}${extras.length ? ` (${extras.join('; ')})` : ''}`,
    stop: () => ref.close(),
  };
}
