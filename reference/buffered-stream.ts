// stream-buffered-until-end: a buffering proxy in front (nginx's proxy_buffering on):
// every event is generated on time and held, then all go out in one write at the end.
import { SseWriter } from './sse-writer.ts';
import type { RequestContext } from './request-context.ts';
// Stryker disable all: [gate] stream-buffered-until-end EV-13

export class BufferedSseWriter extends SseWriter {
  private held = '';
  constructor(private readonly req: RequestContext) { super(req); }

  override async send(payload: string): Promise<void> {
    this.held += this.frame(payload);
  }

  override end(): Promise<void> {
    if (this.held && !this.req.aborted) this.req.res.write(this.held);
    this.held = '';
    return super.end();
  }
}
