// Starts a TypeScript module as a child Node process (tsx loader, IPC channel) and
// waits for its first message. The load tools run targets they start themselves (the
// embedded reference server, the bench responders) in their own process, so the
// target's CPU never competes with the driver's event loop and each can be measured.
import { fork, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/** file: URL of tsx's ESM loader, for `node --import` in child processes. */
export const TSX_LOADER = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

export interface TsChild<Ready> {
  child: ChildProcess;
  ready: Ready;
  /** Asks the child to finish (message {type: 'close'}), kills it after `graceMs`. */
  close(graceMs?: number): Promise<void>;
  /** Sends a message and resolves with the first reply of `type`. */
  ask<T>(message: { type: string }, replyType: string, timeoutMs?: number): Promise<T>;
}

export async function forkTs<Ready>(modulePath: string, env: NodeJS.ProcessEnv = process.env, timeoutMs = 20_000): Promise<TsChild<Ready>> {
  const child = fork(modulePath, [], {
    execArgv: ['--import', TSX_LOADER],
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${modulePath} did not start within ${timeoutMs} ms`));
    }, timeoutMs);
    child.once('message', (m) => {
      clearTimeout(timer);
      const msg = m as { type?: string; error?: string };
      if (msg.type === 'error') {
        child.kill('SIGKILL');
        reject(new Error(msg.error));
      } else resolve(m as Ready);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${modulePath} exited (code ${code}) before it was ready`));
    });
  });
  let exited = child.exitCode !== null;
  child.once('exit', () => { exited = true; });
  return {
    child,
    ready,
    close(graceMs = 3_000) {
      if (exited) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        if (child.connected) child.send({ type: 'close' });
        else child.kill('SIGTERM');
      });
    },
    ask<T>(message: { type: string }, replyType: string, askTimeoutMs = 5_000) {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.off('message', onMessage);
          reject(new Error(`no ${replyType} reply within ${askTimeoutMs} ms`));
        }, askTimeoutMs);
        const onMessage = (m: unknown) => {
          if ((m as { type?: string }).type !== replyType) return;
          clearTimeout(timer);
          child.off('message', onMessage);
          resolve(m as T);
        };
        child.on('message', onMessage);
        child.send(message);
      });
    },
  };
}

/** Child side: answers {type:'cpu'} with its CPU time, exits on {type:'close'} or when the parent goes away. */
export function serveChild(onClose: () => Promise<void>): void {
  const exit = () => {
    onClose().finally(() => process.exit(0));
  };
  process.on('message', (m) => {
    const type = (m as { type?: string }).type;
    if (type === 'close') exit();
    if (type === 'cpu') {
      const u = process.cpuUsage();
      process.send?.({ type: 'cpu', user_s: u.user / 1e6, system_s: u.system / 1e6 });
    }
  });
  process.on('disconnect', exit);
  process.on('SIGINT', () => { /* the parent decides when we stop */ });
}
