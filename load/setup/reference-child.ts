// Child-process entry of the embedded reference server for load runs (see
// reference-process.ts): starts it with the options from CHATGATE_REFERENCE_OPTIONS
// and reports its address, keys and brain over IPC.
import { startReferenceServer, type ReferenceOptions } from '../../reference/server.ts';
import { serveChild } from './ts-child.ts';

try {
  const options = JSON.parse(process.env.CHATGATE_REFERENCE_OPTIONS ?? '{}') as ReferenceOptions;
  const ref = await startReferenceServer(options);
  serveChild(() => ref.close());
  process.send!({ type: 'ready', url: ref.url, keys: ref.keys, brainId: ref.brainId, models: ref.models, pid: process.pid, controlUrl: ref.controlUrl });
} catch (err) {
  process.send!({ type: 'error', error: (err as Error).message });
}
