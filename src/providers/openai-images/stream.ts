/**
 * OpenAI's streamed images answer (`stream: true` on `/images/generations` and `/images/edits`): typed SSE events,
 * `image_generation.partial_image` / `image_edit.partial_image` `{b64_json, partial_image_index, …}` while the image is
 * made, then `image_generation.completed` / `image_edit.completed` `{b64_json, output_format, usage, …}` with the final
 * image. Events are read by their `type` (the `event:` line is optional, a `[DONE]` is ignored); each is checked by
 * schema at the edge. An `error` event (`{type: "error", error}` or `{error}`) is the attempt's UpstreamError.
 * The completed events' usages add up to the answer's usage. Partial images read before a failure in the same piece
 * of text are handed out first; the failure is thrown at the next call.
 */
import { Type } from '@sinclair/typebox';
import { UpstreamError } from '../../core/provider-errors.js';
import { parseStreamData } from '../openai/ir-shared.js';
import { responsesError } from '../openai-responses/upstream.js';
import { SseParser } from '../sse.js';
import { Count, Opt, wireCheck } from '../wire-schema.js';
import { imageData, invalidImage, sniffImageType, type GeneratedImage, type ImageAnswer, type ImageStreamDecoder, type PartialImage } from '../images.js';

const Partial = Type.Object({ b64_json: Type.String(), partial_image_index: Type.Integer({ minimum: 0 }) });
const Completed = Type.Object({
  b64_json: Type.String(),
  output_format: Opt(Type.String()),
  usage: Opt(Type.Object({ input_tokens: Count, output_tokens: Count })),
});
const checkPartial = wireCheck(Partial, 'stream event');
const checkCompleted = wireCheck(Completed, 'stream event');

const FORMAT_TYPES: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export class OpenAIImageStreamDecoder implements ImageStreamDecoder {
  private readonly sse = new SseParser();
  private readonly images: GeneratedImage[] = [];
  private usage: { promptTokens: number; completionTokens: number } | null = null;
  /** A failure after partial images in the same piece of text: those are returned, the failure thrown next. */
  private failure: unknown = null;

  push(text: string): PartialImage[] {
    this.rethrow();
    const out: PartialImage[] = [];
    try {
      for (const ev of this.sse.feed(text)) this.onEvent(ev.event, ev.data, out);
    } catch (err) {
      if (out.length === 0) throw err;
      this.failure = err;
    }
    return out;
  }

  end(): ImageAnswer {
    this.rethrow();
    for (const ev of this.sse.flush()) this.onEvent(ev.event, ev.data, []);
    if (this.images.length === 0) throw new UpstreamError(502, 'Provider stream ended before an image was completed', 'provider_unavailable', 200, null);
    return { images: this.images, usage: this.usage, upstreamId: null, text: null };
  }

  private rethrow(): void {
    if (this.failure !== null) throw this.failure;
  }

  private onEvent(name: string | undefined, data: string, out: PartialImage[]): void {
    if (data === '[DONE]') return;
    const ev = parseStreamData(data);
    if (!isObj(ev)) throw invalidImage('Provider sent an invalid stream event', data.slice(0, 512));
    const type = typeof ev.type === 'string' ? ev.type : name;
    if (type === 'error' || (type === undefined && ev.error !== undefined)) throw responsesError(isObj(ev.error) ? ev.error : ev, ev);
    if (type === 'image_generation.partial_image' || type === 'image_edit.partial_image') {
      const p = checkPartial(ev, type);
      out.push({ b64: imageData(p.b64_json, `${type}.b64_json`), index: p.partial_image_index });
    } else if (type === 'image_generation.completed' || type === 'image_edit.completed') {
      const c = checkCompleted(ev, type);
      const b64 = imageData(c.b64_json, `${type}.b64_json`);
      this.images.push({ b64, mediaType: sniffImageType(b64) ?? (c.output_format ? (FORMAT_TYPES[c.output_format] ?? null) : null) });
      const u = c.usage;
      if (u && (typeof u.input_tokens === 'number' || typeof u.output_tokens === 'number')) {
        const prev = this.usage ?? { promptTokens: 0, completionTokens: 0 };
        this.usage = { promptTokens: prev.promptTokens + (u.input_tokens ?? 0), completionTokens: prev.completionTokens + (u.output_tokens ?? 0) };
      }
    }
  }
}
