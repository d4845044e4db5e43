// Unknown paths and the image/video endpoints that must not exist: 404 error bodies,
// or the defects that pretend they exist.
import { sendJson, type RequestContext } from './request-context.ts';
import { notFound } from './errors.ts';

export async function handleUnavailable(ctx: RequestContext, what: 'images' | 'videos' | 'unknown'): Promise<void> {
  // Stryker disable next-line ArithmeticOperator: [gate] images-200 videos-200
  const now = Math.floor(Date.now() / 1000);
  if (what === 'images' && ctx.defect('images-200')) {
    return sendJson(ctx, 200, { created: now, data: [{ url: 'https://reference.invalid/image.png', revised_prompt: 'a picture' }] });
  }
  if (what === 'videos' && ctx.defect('videos-200')) {
    return sendJson(ctx, 200, { id: 'video_reference', object: 'video', status: 'queued', created_at: now });
  }
  if (what === 'unknown' && ctx.defect('unknown-path-200')) return sendJson(ctx, 200, {});
  // Stryker disable next-line all: [msg-free] ERR-3
  const label = what === 'images' ? 'Image generation is not available. ' : what === 'videos' ? 'Video generation is not available. ' : '';
  // Stryker disable next-line MethodExpression: [msg-free] ERR-3
  const err = notFound(`${label}Invalid URL (${ctx.method} ${ctx.path.slice(0, 200)}).`, 'unknown_url');
  if (ctx.defect('unknown-path-404-no-body')) err.withForm('empty');
  throw err;
}
