/**
 * OpenAI's hosted `image_generation` tool on the simulated Responses API (responses.ts): with the tool in `tools`
 * (and `tool_choice` not `none`, no function call forced, no `content` knob), the model calls it once. The answer
 * then has an `image_generation_call` output item before the message — `{id: "ig_…", type, status: "completed",
 * result: <base64 PNG>, revised_prompt, background, output_format, quality, size}` — and the response carries the
 * tool's tokens in `tool_usage.image_gen` (`input_tokens` = the prompt's, `output_tokens` = `SIM_IMAGE_TOKENS` for
 * the tool's quality plus 100 per partial image), beside the model's `usage`.
 *
 * Streamed: `response.output_item.added` (status `in_progress`), `response.image_generation_call.in_progress`,
 * `…generating`, one `response.image_generation_call.partial_image` per partial image the tool's `partial_images`
 * (0–3) asks for (`partial_image_b64`, `partial_image_index`), `…completed`, then `response.output_item.done` with
 * the result. The partial images are content events (paced, cut by the chunk knobs).
 */
import type { SseEvent } from './protocol.js';
import { SIM_IMAGE_TOKENS, simPng } from './images.js';
import { PARTIAL_IMAGE_TOKENS, simPartialPng } from './images-stream.js';
import { tokensOfChars } from './text.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface ImageCall {
  id: string;
  prompt: string;
  quality: string;
  size: string;
  background: string;
  partials: number;
}

/** The image tool's call for a request, or null (no tool, `tool_choice: "none"`). */
export function imageCall(body: Obj, rid: string, prompt: string): ImageCall | null {
  const tool = Array.isArray(body.tools) ? body.tools.find((t) => isObj(t) && t.type === 'image_generation') : undefined;
  if (!isObj(tool) || body.tool_choice === 'none') return null;
  const partials = Number.isInteger(tool.partial_images) ? Math.min(3, Math.max(0, tool.partial_images as number)) : 0;
  const s = (v: unknown, d: string) => (typeof v === 'string' ? v : d);
  return { id: `ig_sim${rid}`, prompt, quality: s(tool.quality, 'auto'), size: s(tool.size, '1024x1024'), background: s(tool.background, 'opaque'), partials };
}

/** The image made for `prompt` (the final image; partial images are simPartialPng of the same prompt). */
export const simToolImage = (prompt: string): Buffer => simPng(`${prompt}\u0000image_generation`);

export function imageItem(c: ImageCall, status: string, withResult: boolean): Obj {
  const result = withResult ? simToolImage(c.prompt).toString('base64') : null;
  return { id: c.id, type: 'image_generation_call', status, result, revised_prompt: c.prompt, background: c.background, output_format: 'png', quality: c.quality, size: c.size };
}

/** `tool_usage` of a response whose model called the image tool. */
export function imageToolUsage(c: ImageCall): Obj {
  const input = tokensOfChars(c.prompt.length);
  const output = (SIM_IMAGE_TOKENS[c.quality] ?? SIM_IMAGE_TOKENS.auto) + PARTIAL_IMAGE_TOKENS * c.partials;
  return { image_gen: { input_tokens: input, input_tokens_details: { text_tokens: input, image_tokens: 0 }, output_tokens: output, output_tokens_details: { image_tokens: output }, total_tokens: input + output } };
}

/** The streamed events of the image item at `outputIndex` (`push(type, fields, content)` numbers and frames them). */
export function imageEvents(c: ImageCall, outputIndex: number, push: (type: string, fields: Obj, content?: boolean) => void): void {
  const ids = { item_id: c.id, output_index: outputIndex };
  push('response.output_item.added', { output_index: outputIndex, item: imageItem(c, 'in_progress', false) });
  push('response.image_generation_call.in_progress', ids);
  push('response.image_generation_call.generating', ids);
  for (let k = 0; k < c.partials; k++) push('response.image_generation_call.partial_image', { ...ids, partial_image_index: k, partial_image_b64: simPartialPng(c.prompt, 0, k).toString('base64') }, true);
  push('response.image_generation_call.completed', ids);
  push('response.output_item.done', { output_index: outputIndex, item: imageItem(c, 'completed', true) });
}

