/**
 * `POST /images` with `stream: true` (docs/images.md): the hosted API's image event stream — SSE `data:` events
 * `{type: "image_generation.partial_image", b64_json, partial_image_index}` while an upstream that streams natively
 * (OpenAI's images API, asked with `stream: true` and the client's `partial_images`) sends them, then
 * `{type: "image_generation.completed", b64_json, media_type, created, usage?}` (one per image; the usage with the
 * cost, and `gateway_metadata` when asked, on the last), or `{type: "error", error: {code, message, param, type}}`,
 * then `data: [DONE]`.
 *
 * Other upstreams answer each image whole (asked non-streamed): no partial images, and keep-alive comments while the
 * images are being made. A request refused before any byte was sent (validation, policy, 402, every endpoint failing
 * quickly) is answered with the ordinary JSON error and status, as the other streamed APIs do.
 */
import type { ServerResponse } from 'node:http';
import { HttpError } from '../core/errors.js';
import type { JsonReply } from './attempts/cache-step.js';
import { streamOneAnswer } from './reply-stream.js';
import type { UpstreamExchange } from '../providers/http.js';
import type { ImageAnswer, ImageStreamDecoder, PartialImage } from '../providers/registry.js';

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
export function streamImages(raw: ServerResponse, requestId: string, keepaliveMs: number, cancelled: () => boolean, generate: (sink: ImageStreamSink) => Promise<JsonReply>): Promise<void> {
  return streamOneAnswer(raw, requestId, keepaliveMs, cancelled, (early) => generate(partialSink(early)), {
    id: (reply) => reply.id,
    events: (reply) => imageEvents('body' in reply ? reply.body : (JSON.parse(reply.stored.text) as Json)),
    error: (err) => imageErrorEvent(err instanceof HttpError ? err : new HttpError(500, 'Internal server error', { error_type: 'server' })),
  });
}

/** Where a natively streamed attempt relays its partial images (the client's stream). */
export interface ImageStreamSink {
  /** Writes one `image_generation.partial_image` event (the first commits the stream with the generation id). */
  partial(generationId: string, p: PartialImage): Promise<void> | undefined;
  /** Whether a partial image already reached the client (a failure then ends the request: no fallback). */
  readonly sent: boolean;
}

function partialSink(early: (id: string | null, text: string) => Promise<void> | undefined): ImageStreamSink {
  let sent = false;
  return {
    partial(id, p) {
      sent = true;
      return early(id, event({ type: 'image_generation.partial_image', b64_json: p.b64, partial_image_index: p.index }));
    },
    get sent() {
      return sent;
    },
  };
}

/**
 * Reads a streamed upstream answer to its end, handing each partial image to `onPartial` as it completes. The decoder
 * keeps the completed images to the end, so the answer is bounded as a whole (GATEWAY_UPSTREAM_MAX_BYTES), as a
 * non-streamed one is: past it the attempt fails with the same 502.
 */
export async function readImageStream(res: UpstreamExchange, decoder: ImageStreamDecoder, onPartial: (p: PartialImage) => Promise<void> | undefined): Promise<ImageAnswer> {
  res.boundAsWhole();
  const utf8 = new TextDecoder();
  for (let chunk = await res.read(); chunk !== null; chunk = await res.read()) {
    for (const p of decoder.push(utf8.decode(chunk, { stream: true }))) await onPartial(p);
  }
  for (const p of decoder.push(utf8.decode())) await onPartial(p);
  return decoder.end();
}
