// The clients of the client x operation matrix: which library, what it can do, what
// it raises per status, and how to load it. This module imports no client library:
// test titles are built from it at collection time, and each client is only imported
// (dynamically, by its own tests) when it runs, so one that fails to load cannot take
// the others down. (openai.ts is imported here: it holds no library, only the driver
// each openai major is passed to.)
import { readFileSync } from 'node:fs';
import type { Driver } from './driver.ts';
import { OPENAI_ERROR_CLASSES, openaiDriver } from './openai.ts';

export const OPERATIONS = ['models', 'completion', 'stream', 'brain', 'error-400', 'error-401', 'error-403', 'error-429'] as const;
export type Operation = (typeof OPERATIONS)[number];
export type ErrorStatus = 400 | 401 | 403 | 429;

export interface ClientEntry {
  /** Matrix label, e.g. "openai@5": stable across patch upgrades, so test ids are too. */
  id: string;
  /** Official openai client majors compete for SVC-4; everything else is SVC-4b. */
  officialMajor?: number;
  /** npm names (as in package.json) whose installed versions the reports show. */
  packages: string[];
  minNodeMajor?: number;
  /** How the client's users make each call, for test titles. */
  calls: { models?: string; completion: string; stream: string };
  /** What the client raises per status: its class, and its tag where it has one. */
  raises: Record<ErrorStatus, string>;
  load(): Promise<Driver>;
}

const openaiRaises = OPENAI_ERROR_CLASSES as Record<ErrorStatus, string>;

function official(major: number, pkg: string, load: () => Promise<unknown>, minNodeMajor?: number): ClientEntry {
  return {
    id: `openai@${major}`, officialMajor: major, packages: [pkg], minNodeMajor,
    calls: { models: 'models.list()', completion: 'chat.completions.create()', stream: 'chat.completions.create({ stream: true })' },
    raises: openaiRaises,
    load: async () => {
      const mod = await load();
      return openaiDriver(mod as Parameters<typeof openaiDriver>[0], installed([pkg]));
    },
  };
}

export const CLIENTS: readonly ClientEntry[] = [
  official(4, 'openai-v4', () => import('openai-v4')),
  official(5, 'openai-v5', () => import('openai-v5')),
  official(6, 'openai', () => import('openai')),
  // openai 7 declares engines.node >= 22 and is not run on older Node.
  official(7, 'openai-v7', () => import('openai-v7'), 22),
  {
    id: 'ai-sdk@6', packages: ['ai', '@ai-sdk/openai-compatible'],
    calls: { completion: 'generateText()', stream: 'streamText()' },
    raises: { 400: 'APICallError', 401: 'APICallError', 403: 'APICallError', 429: 'APICallError' },
    load: async () => (await import('./ai-sdk.ts')).aiSdkDriver(installed(['ai', '@ai-sdk/openai-compatible'])),
  },
  {
    id: 'langchain@1', packages: ['@langchain/openai', '@langchain/core'],
    calls: { completion: 'ChatOpenAI.invoke()', stream: 'ChatOpenAI.stream()' },
    raises: {
      400: 'BadRequestError', 401: 'AuthenticationError (MODEL_AUTHENTICATION)',
      403: 'PermissionDeniedError', 429: 'RateLimitError (MODEL_RATE_LIMIT)',
    },
    load: async () => (await import('./langchain.ts')).langchainDriver(installed(['@langchain/openai', '@langchain/core'])),
  },
];

export function clientById(id: string): ClientEntry {
  const entry = CLIENTS.find((c) => c.id === id);
  if (!entry) throw new Error(`no client "${id}" in harness/clients/registry.ts; known: ${CLIENTS.map((c) => c.id).join(', ')}`);
  return entry;
}

export function nodeMajor(version = process.versions.node): number {
  return Number(version.split('.')[0]);
}

/** Why the client cannot run on this Node, or undefined when it can. */
export function unavailable(entry: ClientEntry, version = process.versions.node): string | undefined {
  if (entry.minNodeMajor && nodeMajor(version) < entry.minNodeMajor) {
    return `${entry.id.replace('@', ' ')} requires Node >= ${entry.minNodeMajor}; this is Node ${version}`;
  }
  return undefined;
}

/** SVC-4 judges the newest official major that runs on this Node; every other client is SVC-4b. */
export function clauseFor(entry: ClientEntry, version = process.versions.node): 'SVC-4' | 'SVC-4b' {
  const newest = Math.max(...CLIENTS.filter((c) => c.officialMajor !== undefined && !unavailable(c, version)).map((c) => c.officialMajor!));
  return entry.officialMajor === newest ? 'SVC-4' : 'SVC-4b';
}

/** The operations a client can do (model listing only where the client has one). */
export function operationsOf(entry: ClientEntry): Operation[] {
  return OPERATIONS.filter((op) => op !== 'models' || entry.calls.models !== undefined);
}

/** "openai 4.104.0" from the installed package.json files (read, not imported). */
export function installed(packages: string[]): string {
  return packages.map((p) => {
    try {
      const json = JSON.parse(readFileSync(new URL(`../../node_modules/${p}/package.json`, import.meta.url), 'utf8')) as { name: string; version: string };
      return `${json.name} ${json.version}`;
    } catch {
      return `${p} (not installed)`;
    }
  }).join(' + ');
}
