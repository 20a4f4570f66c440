/**
 * Simulated image generation APIs (under `/<provider>/…` like the other protocols):
 *
 *   POST /v1/images/generations   OpenAI: `{model, prompt, n?, size?, quality?, background?, output_format?, …}` →
 *                                 `{created, data: [{b64_json}], output_format, size, quality, background, usage?}`
 *   POST /v1/images/edits         the same, with reference images (`images: [{image_url}]`, JSON as OpenAI takes it)
 *                                 Both with `stream: true` (not DALL·E): OpenAI's event stream, `partial_images` (0–3)
 *                                 partial images per image then the completed event with usage (images-stream.ts)
 *   POST /v1beta/models/<…image…>:generateContent (and :streamGenerateContent?alt=sse)
 *                                 Gemini image output: with `generationConfig.responseModalities` including IMAGE, a
 *                                 text part and an `inlineData` PNG part; without it, the ordinary Gemini text answer.
 *
 * The images are real PNG files (`simPng`: a small square of one colour derived from the prompt, seed and index), so
 * clients can decode them. Usage: gpt-image models report `input_tokens` (ceil(prompt characters / 4), plus 65 per
 * reference image) and `output_tokens` (`SIM_IMAGE_TOKENS` per image, for the quality); DALL·E reports none (priced per
 * image). Gemini reports `IMAGE_OUTPUT_TOKENS` per image plus the text's tokens. The usual knobs apply, and
 * `imageBytes`: the size of each image OpenAI's images API answers (final and partial; padded PNGs, see simPng).
 */
import { deflateSync } from 'node:zlib';
import type { OutgoingHttpHeaders } from 'node:http';
import { generateContent, geminiProtocol } from './gemini.js';
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply } from './protocol.js';
import { hash32, tokensOfChars } from './text.js';
import { streamedImages } from './images-stream.js';

/** Output tokens of one gpt-image image by quality (OpenAI's table for 1024×1024). */
export const SIM_IMAGE_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160, auto: 1056 };
/** Gemini 2.5 Flash Image: tokens per generated image. */
export const IMAGE_OUTPUT_TOKENS = 1290;
export const GEMINI_IMAGE_TEXT = 'Here is the image you asked for.';
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json; charset=UTF-8' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

let CRC_TABLE: Int32Array | null = null;
function crc32(buf: Buffer): number {
  if (!CRC_TABLE) {
    CRC_TABLE = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[n] = c;
    }
  }
  let c = -1;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/**
 * A valid `side`×`side` PNG (8-bit RGB) of one colour derived from `key`. `bytes` (the `imageBytes` knob): the file is
 * padded to that size with a private ancillary chunk (`siMp`, which decoders skip) when it is at least 12 bytes (the
 * chunk's overhead) larger than the bare image; the pixels are the same.
 */
export function simPng(key: string, side = 8, bytes = 0): Buffer {
  const h = hash32(key);
  const rgb = [h & 0xff, (h >>> 8) & 0xff, (h >>> 16) & 0xff];
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: RGB
  const row = Buffer.alloc(1 + side * 3);
  for (let x = 0; x < side; x++) row.set(rgb, 1 + x * 3);
  const raw = Buffer.concat(Array.from({ length: side }, () => row));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))];
  const pad = bytes - parts.reduce((n, b) => n + b.length, 0) - 12;
  if (pad >= 0) parts.splice(2, 0, chunk('siMp', Buffer.alloc(pad)));
  return Buffer.concat(parts);
}

const invalid = (ctx: EndpointContext, message: string, param: string | null): JsonReply => openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code: null });

function openaiImages(edit: boolean) {
  return (ctx: EndpointContext): Reply => {
    const b = ctx.body;
    if (!isObj(b)) return invalid(ctx, 'The request body must be a JSON object.', null);
    if (typeof b.model !== 'string' || b.model === '') return invalid(ctx, "Missing required parameter: 'model'.", 'model');
    if (typeof b.prompt !== 'string' || b.prompt === '') return invalid(ctx, "Missing required parameter: 'prompt'.", 'prompt');
    const dalle = b.model.startsWith('dall-e');
    const n = b.n === undefined ? 1 : b.n;
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 10) return invalid(ctx, `Invalid 'n': must be an integer from 1 to 10.`, 'n');
    if (dalle && n !== 1) return invalid(ctx, "Invalid 'n': dall-e-3 only supports n=1.", 'n');
    if (b.size !== undefined && !(typeof b.size === 'string' && /^(auto|\d+x\d+)$/.test(b.size))) return invalid(ctx, `Invalid value for 'size': ${JSON.stringify(b.size)}.`, 'size');
    if (!dalle && b.response_format !== undefined) return invalid(ctx, "Unknown parameter: 'response_format'.", 'response_format');
    const refs = Array.isArray(b.images) ? b.images : [];
    if (edit && refs.length === 0) return invalid(ctx, "Missing required parameter: 'images'.", 'images');
    for (const [i, r] of refs.entries()) if (!isObj(r) || typeof r.image_url !== 'string') return invalid(ctx, `Invalid 'images[${i}]': expected an object with image_url.`, `images[${i}]`);
    const quality = typeof b.quality === 'string' ? b.quality : 'auto';
    if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean') return invalid(ctx, "Invalid type for 'stream': expected a boolean.", 'stream');
    const partials = b.partial_images ?? 0;
    if (!Number.isInteger(partials) || (partials as number) < 0 || (partials as number) > 3) return invalid(ctx, "Invalid 'partial_images': must be an integer from 0 to 3.", 'partial_images');
    if (b.stream === true) {
      if (dalle) return invalid(ctx, `Streaming is not supported for ${b.model}.`, 'stream');
      const prompt = b.prompt;
      const input = tokensOfChars(prompt.length) + 65 * refs.length;
      return streamedImages({ edit, prompt, n: n as number, partials: partials as number, imageBytes: ctx.knobs.imageBytes ?? 0, quality, size: typeof b.size === 'string' ? b.size : '1024x1024', background: typeof b.background === 'string' ? b.background : 'opaque', input, refs: refs.length });
    }
    const data = Array.from({ length: n as number }, (_, i) => ({ b64_json: simPng(`${b.prompt}\u0000${i}`, 8, ctx.knobs.imageBytes).toString('base64') }));
    const body: Obj = { created: Math.floor(Date.now() / 1000), data, output_format: 'png', size: b.size ?? '1024x1024', quality, background: b.background ?? 'opaque' };
    if (!dalle) {
      const input = tokensOfChars(b.prompt.length) + 65 * refs.length;
      const output = (SIM_IMAGE_TOKENS[quality] ?? SIM_IMAGE_TOKENS.auto) * (n as number);
      body.usage = { input_tokens: input, output_tokens: output, total_tokens: input + output, input_tokens_details: { text_tokens: tokensOfChars(b.prompt.length), image_tokens: 65 * refs.length } };
    }
    return { kind: 'json', status: 200, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, chunks: 1 };
  };
}

const GEMINI_IMAGE_PATH = /^\/v1beta\/models\/([^/:]*image[^/:]*)(?::|%3A)(generateContent|streamGenerateContent)$/i;

function geminiImage(ctx: EndpointContext): Reply {
  const m = GEMINI_IMAGE_PATH.exec(ctx.path)!;
  const b = ctx.body;
  const cfg = isObj(b) && isObj(b.generationConfig) ? b.generationConfig : {};
  const modalities = Array.isArray(cfg.responseModalities) ? cfg.responseModalities.map((x) => String(x).toUpperCase()) : [];
  if (!modalities.includes('IMAGE')) return generateContent(ctx);
  const model = decodeURIComponent(m[1]);
  const stream = m[2].toLowerCase() === 'streamgeneratecontent';
  const contents = isObj(b) && Array.isArray(b.contents) ? b.contents : [];
  let text = '';
  let media = 0;
  for (const c of contents) {
    if (!isObj(c) || !Array.isArray(c.parts)) continue;
    for (const p of c.parts) {
      if (isObj(p) && typeof p.text === 'string') text += p.text;
      if (isObj(p) && isObj(p.inlineData)) media++;
    }
  }
  if (text === '' && media === 0) return geminiProtocol.error(400, ctx, { message: '* GenerateContentRequest.contents: contents is not specified\n' });
  const seed = typeof cfg.seed === 'number' ? cfg.seed : 0;
  const png = simPng(`${text}\u0000${seed}`).toString('base64');
  const prompt = tokensOfChars(text.length) + 258 * media;
  const textTokens = tokensOfChars(GEMINI_IMAGE_TEXT.length);
  const usage = {
    promptTokenCount: prompt,
    candidatesTokenCount: IMAGE_OUTPUT_TOKENS + textTokens,
    totalTokenCount: prompt + IMAGE_OUTPUT_TOKENS + textTokens,
    candidatesTokensDetails: [
      { modality: 'TEXT', tokenCount: textTokens },
      { modality: 'IMAGE', tokenCount: IMAGE_OUTPUT_TOKENS },
    ],
  };
  const meta = { modelVersion: ctx.knobs.model ?? model, responseId: `simImg${ctx.rid}` };
  const textPart = { text: GEMINI_IMAGE_TEXT };
  const imagePart = { inlineData: { mimeType: 'image/png', data: png } };
  if (!stream) {
    const body = { candidates: [{ content: { role: 'model', parts: [textPart, imagePart] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...meta };
    return { kind: 'json', status: 200, body: JSON.stringify(body), headers: JSON_HEADERS, chunks: 2 };
  }
  const running = { promptTokenCount: prompt, totalTokenCount: prompt };
  const values = [
    { value: { candidates: [{ content: { role: 'model', parts: [textPart] }, index: 0 }], usageMetadata: running, ...meta }, content: true },
    { value: { candidates: [{ content: { role: 'model', parts: [imagePart] }, index: 0 }], usageMetadata: running, ...meta }, content: true },
    { value: { candidates: [{ content: { role: 'model', parts: [] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...meta }, content: false },
  ];
  if (new URLSearchParams(ctx.query).get('alt') === 'sse') return { kind: 'sse', events: values.map((v) => ({ data: JSON.stringify(v.value), ...(v.content ? { content: true } : {}) })) };
  return { kind: 'json', status: 200, body: JSON.stringify(values.map((v) => v.value)), headers: JSON_HEADERS, chunks: 2 };
}

/** OpenAI's `POST /images/generations` handler (also behind Azure's deployment URL, azure.ts). */
export const openaiImageGenerations = openaiImages(false);

/** Registered before the Gemini chat endpoints, whose path pattern also matches image models. */
export const imageEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/images/generations', protocol: openaiProtocol, modelCall: true, handle: openaiImageGenerations },
  { method: 'POST', path: '/v1/images/edits', protocol: openaiProtocol, modelCall: true, handle: openaiImages(true) },
  { method: 'POST', path: GEMINI_IMAGE_PATH, protocol: geminiProtocol, modelCall: true, handle: geminiImage },
];
