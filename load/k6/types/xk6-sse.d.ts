// The xk6-sse extension's module (github.com/phymbert/xk6-sse, v0.1.12), only in a k6
// built with it (docs/K6.md): the part chat-stream-sse uses. sse.open blocks until the
// stream ends, calling the handlers as events arrive.
declare module 'k6/x/sse' {
  /** What the extension parsed from one event (it splits lines on LF only; values keep a CR of a CRLF line end). */
  export interface SseExtensionEvent {
    id: string;
    comment: string;
    name: string;
    data: string;
  }
  export interface SseExtensionError {
    error(): string;
  }
  export interface SseClient {
    on(event: 'open', handler: () => void): void;
    on(event: 'event', handler: (e: SseExtensionEvent) => void): void;
    on(event: 'error', handler: (e: SseExtensionError) => void): void;
    close(): void;
  }
  export interface SseOpenParams {
    method?: string;
    body?: string;
    headers?: Record<string, string>;
    tags?: Record<string, string>;
  }
  export interface SseResponse {
    url: string;
    status: number;
    headers: Record<string, string>;
    error: string;
  }
  export function open(url: string, params: SseOpenParams, setup: (client: SseClient) => void): SseResponse;
  const sse: { open: typeof open };
  export default sse;
}
