// The error request handling throws (anywhere, the body reader included); the server
// turns it into an error response (errors.ts writeError). A leaf module, so the request
// context can throw it and the error writers can be built on the context.

/** How an error goes on the wire; anything but 'json' exists for defects only. */
export type ErrorForm = 'json' | 'empty' | 'text' | 'sse';

/** Thrown anywhere in request handling; the server turns it into an error response. */
export class ApiError extends Error {
  form: ErrorForm = 'json';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  withForm(form: ErrorForm): this {
    this.form = form;
    return this;
  }
}
