/**
 * OpenAI's streamed images API (`stream: true` on `POST /v1/images/generations` and `/v1/images/edits`), as the
 * simulator answers it: per image, `partial_images` (0–3) `image_generation.partial_image` events
 * (`image_edit.partial_image` for edits) with `partial_image_index` 0…, then one `image_generation.completed`
 * (`image_edit.completed`) event with the final image and its usage. Each event has `event:` and `data:` (OpenAI's
 * typed events); there is no `[DONE]`. Fields as OpenAI sends them: `b64_json`, `created_at`, `size`, `quality`,
 * `background`, `output_format`, and on the completed event `usage {input_tokens, input_tokens_details {text_tokens,
 * image_tokens}, output_tokens, total_tokens}`.
 *
 * Tokens: each image's `output_tokens` are `SIM_IMAGE_TOKENS[quality]` plus 100 per partial image (OpenAI's image
 * generation guide: "each partial image will incur an additional 100 image output tokens"); the prompt's tokens are
 * reported on the first image's event only (with n > 1 the events' usages add up to the request's). Every event is a
 * content event: paced by the chunk knobs, and `errorAfterChunks` / `disconnectAfterChunks` cut between them.
 */
import type { Reply, SseEvent } from './protocol.js';
import { SIM_IMAGE_TOKENS, simPng } from './images.js';
import { tokensOfChars } from './text.js';

/** Output tokens OpenAI adds per partial image. */
export const PARTIAL_IMAGE_TOKENS = 100;

export interface StreamedImagesRequest {
  edit: boolean;
  prompt: string;
  n: number;
  partials: number;
  /** The `imageBytes` knob: each image (partial or final) padded to this size (simPng); 0 = the bare image. */
  imageBytes: number;
  quality: string;
  size: string;
  background: string;
  /** Prompt tokens (text and reference images). */
  input: number;
  refs: number;
}

/** The partial image `k` of image `i` (a PNG of its own colour, so that a test can tell them apart). */
export const simPartialPng = (prompt: string, i: number, k: number, bytes = 0): Buffer => simPng(`${prompt}\u0000${i}\u0000partial${k}`, 8, bytes);

export function streamedImages(r: StreamedImagesRequest): Reply {
  const prefix = r.edit ? 'image_edit' : 'image_generation';
  const created = Math.floor(Date.now() / 1000);
  const common = { created_at: created, size: r.size, quality: r.quality, background: r.background, output_format: 'png' };
  const events: SseEvent[] = [];
  const push = (type: string, fields: Record<string, unknown>) => events.push({ event: type, data: JSON.stringify({ type, ...fields }), content: true });
  for (let i = 0; i < r.n; i++) {
    for (let k = 0; k < r.partials; k++) push(`${prefix}.partial_image`, { b64_json: simPartialPng(r.prompt, i, k, r.imageBytes).toString('base64'), ...common, partial_image_index: k });
    const input = i === 0 ? r.input : 0;
    const output = (SIM_IMAGE_TOKENS[r.quality] ?? SIM_IMAGE_TOKENS.auto) + PARTIAL_IMAGE_TOKENS * r.partials;
    const text = i === 0 ? tokensOfChars(r.prompt.length) : 0;
    const usage = { input_tokens: input, input_tokens_details: { text_tokens: text, image_tokens: input - text }, output_tokens: output, total_tokens: input + output };
    push(`${prefix}.completed`, { b64_json: simPng(`${r.prompt}\u0000${i}`, 8, r.imageBytes).toString('base64'), ...common, usage });
  }
  return { kind: 'sse', events };
}
