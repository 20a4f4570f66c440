/**
 * `POST /images` with `stream: true` (docs/images.md): the hosted API's image event stream — SSE `data:` events
 * `{type: "image_generation.completed", b64_json, media_type, created, usage?}` (one per image; the usage with the
 * cost, and `gateway_metadata` when asked, on the last), or `{type: "error", error: {code, message, param, type}}`, then `data: [DONE]`.
 *
 * The upstreams answer each image whole (the gateway asks them non-streamed), so there are no
 * `image_generation.partial_image` events; while the images are being made the stream carries keep-alive comments.
 * A request refused before any byte was sent (validation, policy, 402, every endpoint failing quickly) is answered
 * with the ordinary JSON error and status, as the other streamed APIs do.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../core/errors.js';
import type { JsonReply } from './attempts/cache-step.js';
import { streamOneAnswer } from './reply-stream.js';

type Json = Record<string, unknown>;

const event = (data: Json): string => `data: ${JSON.stringify(data)}\n\n`;

/** The events of a whole images answer (the body POST /images would answer), then `[DONE]`. */
export function imageEvents(body: Json): string {
  const data = (body.data as Array<{ b64_json: string; media_type?: string }> | undefined) ?? [];
  const created = typeof body.created === 'number' ? body.created : Math.floor(Date.now() / 1000);
  let out = '';
  data.forEach((d, i) => {
    const ev: Json = { type: 'image_generation.completed', b64_json: d.b64_json, created };
    if (d.media_type) ev.media_type = d.media_type;
    if (i === data.length - 1) {
      if (body.usage) ev.usage = body.usage;
      if (body.gateway_metadata) ev.gateway_metadata = body.gateway_metadata;
    }
    out += event(ev);
  });
  return out + 'data: [DONE]\n\n';
}

/** The stream's error event (after the 200 was sent). */
export function imageErrorEvent(e: HttpError): string {
  const type = typeof e.metadata?.error_type === 'string' ? e.metadata.error_type : e.status >= 500 ? 'provider_error' : 'invalid_request';
  return event({ type: 'error', error: { code: String(e.status), message: e.message, param: typeof e.metadata?.field === 'string' ? e.metadata.field : null, type } }) + 'data: [DONE]\n\n';
}

/**
 * Runs `generate` and answers it as the event stream on `raw`: keep-alive comments every `keepaliveMs` meanwhile (the
 * first commits the 200). An error before that is thrown (the route answers it as JSON); after, it is the error event.
 */
export function streamImages(raw: ServerResponse, requestId: string, keepaliveMs: number, cancelled: () => boolean, generate: () => Promise<JsonReply>): Promise<void> {
  return streamOneAnswer(raw, requestId, keepaliveMs, cancelled, generate, {
    id: (reply) => reply.id,
    events: (reply) => imageEvents('body' in reply ? reply.body : (JSON.parse(reply.stored.text) as Json)),
    error: (err) => imageErrorEvent(err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' })),
  });
}
