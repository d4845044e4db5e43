// Error bodies: OpenAI's envelope {"error": {message, type, code, param}} with
// OpenAI-like type/code values, and every error-shape defect in one place.
import { ApiError } from './api-error.ts';
import { baseHeaders, contentType, sendBody, sendEmpty, sendJson, type RequestContext } from './request-context.ts';

export { ApiError } from './api-error.ts';

// Stryker disable next-line StringLiteral: [equiv] caller passes it
export const badRequest = (message: string, code = 'invalid_request_error', param: string | null = null) =>
  new ApiError(400, 'invalid_request_error', code, message, param);
export const unauthorized = (message: string) => new ApiError(401, 'invalid_request_error', 'invalid_api_key', message);
export const forbidden = (message: string) => new ApiError(403, 'permission_error', 'insufficient_scope', message);
export const notFound = (message: string, code: string, param: string | null = null) =>
  new ApiError(404, 'not_found_error', code, message, param);
// Stryker disable next-line StringLiteral: [no-500] ERR-2
export const serverError = (message: string) => new ApiError(500, 'server_error', 'internal_error', message);
export const overloaded = () =>
  // Stryker disable next-line StringLiteral,ObjectLiteral: [overload] ERR-4
  new ApiError(503, 'server_error', 'overloaded', 'The service is overloaded; retry shortly.', null, { 'Retry-After': '1' });

export function errorBody(ctx: RequestContext, err: ApiError): Record<string, unknown> {
  let message = err.message;
  // key-echoed-in-error: the leak AUTH-9 exists to catch.
  if (err.status === 400 && ctx.defect('key-echoed-in-error') && ctx.key) message += ` (request made with key ${ctx.key.value})`;
  // error-echoes-url: the request line as received, query string included (a legal habit of many frameworks).
  if ((err.status === 401 || err.status === 404) && ctx.variant('error-echoes-url')) message += ` (${ctx.method} ${ctx.req.url ?? '/'})`;
  const inner: Record<string, unknown> = { message, type: err.type, param: err.param, code: err.code };
  if (ctx.variant('error-param-absent')) delete inner.param;
  if (ctx.variant('extra-fields')) inner.x_reference_detail = { status: err.status };
  if (ctx.defect('error-missing-type')) delete inner.type;
  if (ctx.defect('error-missing-code')) delete inner.code;
  if (ctx.defect('error-code-null')) inner.code = null;
  if (ctx.defect('error-code-numeric')) inner.code = err.status;
  if (err.status === 401 && ctx.defect('auth-401-code-numeric')) inner.code = 401;
  if (ctx.defect('error-message-not-string')) inner.message = { text: message };
  if (ctx.defect('error-empty-message')) inner.message = '';
  if (ctx.defect('error-flat')) return inner;
  if ((err.status === 400 || err.status === 401) && ctx.defect('errors-4xx-string-error')) return { error: message };
  const body: Record<string, unknown> = { error: inner };
  if (ctx.variant('extra-fields')) body.x_reference_request = `req_${Date.now().toString(36)}`;
  return body;
}

function escapeHtml(s: string): string {
  // Stryker disable next-line Regex,ObjectLiteral,StringLiteral: [gate] error-html ERR-1
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

export async function writeError(ctx: RequestContext, err: ApiError): Promise<void> {
  const { res } = ctx;
  // Stryker disable next-line ConditionalExpression: [equiv] client gone
  if (res.destroyed) return;
  // Stryker disable next-line ConditionalExpression,BlockStatement: [unreached] mid-stream throw
  if (res.headersSent) {
    // Too late for a status: the stream already started; just end it.
    res.end();
    return;
  }
  let form = err.form;
  if (err.status === 401 && ctx.defect('auth-401-no-body')) form = 'empty';
  if (err.status === 401 && ctx.defect('auth-401-plain-text')) form = 'text';
  if ((err.status === 400 || err.status === 401) && ctx.defect('errors-4xx-plain-text')) form = 'text';
  const headers = err.headers;
  switch (form) {
    // Stryker disable next-line ConditionalExpression: [gate] error forms
    case 'empty':
      return sendEmpty(ctx, err.status, headers);
    // Stryker disable next-line ConditionalExpression: [gate] error forms
    case 'text':
      // Stryker disable next-line StringLiteral,ConditionalExpression,EqualityOperator: [gate] error forms
      return sendBody(ctx, err.status, 'text/plain', err.status === 401 ? 'Unauthorized' : err.message, headers);
    // Stryker disable next-line ConditionalExpression,BlockStatement: [gate] error forms
    case 'sse': {
      // auth-401-as-event-stream: an error event in a stream the client never should have got.
      // Stryker disable next-line StringLiteral: [gate] error forms
      const payload = `event: error\ndata: ${JSON.stringify(errorBody(ctx, err))}\n\n`;
      // Stryker disable next-line ObjectLiteral: [gate] error forms
      res.writeHead(err.status, {
        ...baseHeaders(ctx),
        ...headers,
        // Stryker disable next-line StringLiteral: [gate] error forms
        'Content-Type': contentType(ctx, 'text/event-stream'),
        // Stryker disable next-line StringLiteral: [gate] error forms
        'Cache-Control': 'no-cache',
      });
      res.end(payload);
      return;
    }
    // Stryker disable next-line ConditionalExpression: [equiv] switch break
    case 'json':
      break;
  }
  if (ctx.defect('error-html')) {
    const html = `<!doctype html><html><head><title>${err.status} Error</title></head><body><h1>${err.status}</h1><p>${escapeHtml(err.message)}</p></body></html>`;
    return sendBody(ctx, err.status, 'text/html', html, headers);
  }
  return sendJson(ctx, err.status, errorBody(ctx, err), headers);
}
