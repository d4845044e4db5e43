// The part of autocannon's programmatic API the throughput scenario uses (the
// package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void;
  }

  export interface AutocannonClient extends EventEmitter {}

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    overallRate?: number;
    timeout?: number;
    pipelining?: number;
    ignoreCoordinatedOmission?: boolean;
    requests?: AutocannonRequest[];
    setupClient?: (client: AutocannonClient) => void;
    verifyBody?: (body: string) => boolean;
    excludeErrorStats?: boolean;
  }

  export interface AutocannonResult {
    totalRequests: number;
    totalCompletedRequests: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    resets: number;
    duration: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: Record<string, number>;
    requests: Record<string, number>;
  }

  export interface Instance extends EventEmitter {
    stop(): void;
  }

  function autocannon(opts: AutocannonOptions, cb: (err: Error | null, result: AutocannonResult) => void): Instance;
  export default autocannon;
}
