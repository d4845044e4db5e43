// The reports self-tests' name for a suite run with arguments (see ../support/run-suite.ts).
import { runSuite, type SuiteRun } from '../support/run-suite.ts';

export type ChatgateRun = SuiteRun;

export function runChatgate(env: Record<string, string | undefined>, args: string[] = []): Promise<ChatgateRun> {
  return runSuite(env, { args });
}
