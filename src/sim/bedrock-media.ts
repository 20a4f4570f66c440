/**
 * Amazon Bedrock's image models through InvokeModel and the Agent Runtime's Rerank API, as bedrock.ts serves them
 * (every request SigV4-verified there first):
 *
 *   POST /model/{modelId}/invoke   Nova Canvas / Titan Image Generator: `{taskType: "TEXT_IMAGE", textToImageParams:
 *                                  {text, negativeText?}, imageGenerationConfig: {numberOfImages, width, height,
 *                                  quality, seed, cfgScale}}` → `{images: [base64 PNG…]}`; Stability (`stability.*`):
 *                                  `{prompt, aspect_ratio?, seed?, output_format?}` → `{seeds, finish_reasons: [null],
 *                                  images: [base64]}`
 *   POST /rerank                   `{queries: [{type: TEXT, textQuery: {text}}], sources: [{type: INLINE,
 *                                  inlineDocumentSource: {type: TEXT, textDocument: {text}}}], rerankingConfiguration:
 *                                  {type: BEDROCK_RERANKING_MODEL, bedrockRerankingConfiguration: {modelConfiguration:
 *                                  {modelArn}, numberOfResults?}}}` → `{results: [{index, relevanceScore}]}`
 *
 * Each body is checked as AWS documents it (sizes, counts, ranges, enums; a ValidationException naming the field
 * otherwise). Images are real files (`simPng`; JPEG and WebP headers for Stability's other formats) whose colour
 * derives from the prompt, seed and index. Rerank scores are `simRelevance`, sorted highest first, cut to
 * `numberOfResults`. A Stability prompt containing `[filtered]` gets the documented filtered answer
 * (`finish_reasons: ["Filter reason: prompt"]`, no image).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { EndpointContext, JsonReply, Reply } from './protocol.js';
import { simPng } from './images.js';
import { simRelevance } from './rerank.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
type Invalid = (message: string) => JsonReply;

const TITAN_SIZES = new Set(['1024x1024', '768x768', '512x512', '768x1152', '384x576', '1152x768', '576x384', '768x1280', '384x640', '1280x768', '640x384', '896x1152', '448x576', '1152x896', '576x448', '768x1408', '384x704', '1408x768', '704x384', '640x1408', '320x704', '1408x640', '704x320', '1152x640', '1173x640']);
const STABILITY_RATIOS = new Set(['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21']);
const isInt = (v: unknown, min: number, max: number): v is number => typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

function fakeImage(format: string, key: string): string {
  if (format === 'jpeg') return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'latin1'), Buffer.from(key.slice(0, 16)), Buffer.from([0xff, 0xd9])]).toString('base64');
  if (format === 'webp') return Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.from([0x1a, 0, 0, 0]), Buffer.from('WEBPVP8 ', 'latin1'), Buffer.from(key.slice(0, 16))]).toString('base64');
  return simPng(key).toString('base64');
}

function novaOrTitan(ctx: EndpointContext, modelId: string, b: Obj, invalid: Invalid): Reply {
  const nova = modelId.includes('nova-canvas');
  if (b.taskType !== 'TEXT_IMAGE') return invalid('Malformed input request: #/taskType: TEXT_IMAGE is the only task this simulator serves');
  const p = isObj(b.textToImageParams) ? b.textToImageParams : null;
  const maxText = nova ? 1024 : 512;
  if (!p || typeof p.text !== 'string' || p.text.length < 1 || p.text.length > maxText) return invalid(`Malformed input request: #/textToImageParams/text: expected a string of 1 to ${maxText} characters`);
  if (p.negativeText !== undefined && (typeof p.negativeText !== 'string' || p.negativeText.length < 1 || p.negativeText.length > maxText)) return invalid(`Malformed input request: #/textToImageParams/negativeText: expected a string of 1 to ${maxText} characters`);
  const c = isObj(b.imageGenerationConfig) ? b.imageGenerationConfig : {};
  const n = c.numberOfImages ?? 1;
  if (!isInt(n, 1, 5)) return invalid('Malformed input request: #/imageGenerationConfig/numberOfImages: 1 to 5');
  const [w, h] = [c.width ?? 1024, c.height ?? 1024];
  if (typeof w !== 'number' || typeof h !== 'number') return invalid('Malformed input request: #/imageGenerationConfig/width and height must be integers');
  if (nova) {
    if (!isInt(w, 320, 4096) || !isInt(h, 320, 4096) || w % 16 !== 0 || h % 16 !== 0) return invalid('Malformed input request: width and height must be between 320 and 4096 and divisible by 16');
    if (w / h > 4 || h / w > 4) return invalid('Malformed input request: the aspect ratio must be between 1:4 and 4:1');
    if (w * h > 4_194_304) return invalid('Malformed input request: the image must be at most 4,194,304 pixels');
  } else if (!TITAN_SIZES.has(`${w}x${h}`)) return invalid(`Malformed input request: ${w}x${h} is not a supported image size`);
  if (c.quality !== undefined && c.quality !== 'standard' && c.quality !== 'premium') return invalid('Malformed input request: #/imageGenerationConfig/quality: standard or premium');
  if (c.seed !== undefined && !isInt(c.seed, 0, nova ? 858_993_459 : 2_147_483_646)) return invalid('Malformed input request: #/imageGenerationConfig/seed is out of range');
  if (c.cfgScale !== undefined && (typeof c.cfgScale !== 'number' || c.cfgScale < 1.1 || c.cfgScale > 10)) return invalid('Malformed input request: #/imageGenerationConfig/cfgScale: 1.1 to 10');
  const images = Array.from({ length: n }, (_, i) => simPng(`${modelId}\u0000${p.text}\u0000${String(c.seed ?? 0)}\u0000${i}`).toString('base64'));
  return { kind: 'json', status: 200, body: JSON.stringify({ images }), headers: { 'content-type': 'application/json', 'x-amzn-requestid': `sim-${ctx.rid}` }, chunks: n };
}

function stability(ctx: EndpointContext, modelId: string, b: Obj, invalid: Invalid): Reply {
  if (typeof b.prompt !== 'string' || b.prompt.length < 1 || b.prompt.length > 10_000) return invalid('Malformed input request: #/prompt: expected a string of 1 to 10000 characters');
  if (b.aspect_ratio !== undefined && !STABILITY_RATIOS.has(String(b.aspect_ratio))) return invalid(`Malformed input request: #/aspect_ratio: ${String(b.aspect_ratio)} is not one of ${[...STABILITY_RATIOS].join(', ')}`);
  if (b.seed !== undefined && !isInt(b.seed, 0, 4_294_967_294)) return invalid('Malformed input request: #/seed: 0 to 4294967294');
  const format = b.output_format ?? 'png';
  if (format !== 'png' && format !== 'jpeg' && format !== 'webp') return invalid('Malformed input request: #/output_format: jpeg, png or webp');
  for (const k of ['width', 'height', 'size', 'n', 'samples']) if (k in b) return invalid(`Malformed input request: extraneous key [${k}] is not permitted`);
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'x-amzn-requestid': `sim-${ctx.rid}` };
  if (b.prompt.includes('[filtered]')) return { kind: 'json', status: 200, body: JSON.stringify({ finish_reasons: ['Filter reason: prompt'] }), headers, chunks: 1 };
  const seed = (b.seed as number | undefined) ?? 42;
  const image = fakeImage(format, `${modelId}\u0000${b.prompt}\u0000${seed}\u0000${String(b.aspect_ratio ?? '1:1')}`);
  return { kind: 'json', status: 200, body: JSON.stringify({ seeds: [seed], finish_reasons: [null], images: [image] }), headers, chunks: 1 };
}

/** InvokeModel of an image model (null: not an image model id). */
export function invokeImage(ctx: EndpointContext, modelId: string, b: Obj, invalid: Invalid): Reply | null {
  const id = modelId.replace(/^(us|eu|apac|global)\./, '');
  if (id.startsWith('amazon.nova-canvas') || id.startsWith('amazon.titan-image-generator')) return novaOrTitan(ctx, id, b, invalid);
  if (id.startsWith('stability.')) return stability(ctx, id, b, invalid);
  return null;
}

const ARN = /^arn:aws:bedrock:([a-z0-9-]+)::foundation-model\/((amazon\.rerank|cohere\.rerank)[a-z0-9.:-]*)$/;

/** The Agent Runtime's Rerank (after the signature check). */
export function rerank(ctx: EndpointContext, invalid: Invalid): Reply {
  const b = ctx.body;
  if (!isObj(b)) return invalid('Malformed input request, please reformat your input and try again.');
  const q = Array.isArray(b.queries) && b.queries.length === 1 && isObj(b.queries[0]) ? b.queries[0] : null;
  const query = q && q.type === 'TEXT' && isObj(q.textQuery) && typeof q.textQuery.text === 'string' ? q.textQuery.text : null;
  if (query === null) return invalid('1 validation error detected: Value at \'queries\' failed to satisfy constraint: Member must have length 1 and be a TEXT query');
  if (!Array.isArray(b.sources) || b.sources.length < 1 || b.sources.length > 1000) return invalid("1 validation error detected: Value at 'sources' failed to satisfy constraint: Member must have length between 1 and 1000");
  const texts: string[] = [];
  for (const s of b.sources) {
    const d = isObj(s) && s.type === 'INLINE' && isObj(s.inlineDocumentSource) ? s.inlineDocumentSource : null;
    const text = d && d.type === 'TEXT' && isObj(d.textDocument) && typeof d.textDocument.text === 'string' ? d.textDocument.text : null;
    if (text === null) return invalid("Value at 'sources' failed to satisfy constraint: each source must be INLINE with a TEXT textDocument");
    texts.push(text);
  }
  const rc = isObj(b.rerankingConfiguration) ? b.rerankingConfiguration : null;
  const brc = rc && rc.type === 'BEDROCK_RERANKING_MODEL' && isObj(rc.bedrockRerankingConfiguration) ? rc.bedrockRerankingConfiguration : null;
  const arn = brc && isObj(brc.modelConfiguration) && typeof brc.modelConfiguration.modelArn === 'string' ? brc.modelConfiguration.modelArn : '';
  const m = ARN.exec(arn);
  if (!brc || !m) return invalid(`The provided model ARN is invalid (${arn || 'missing'}): expected arn:aws:bedrock:<region>::foundation-model/<reranker model id>`);
  if (brc.numberOfResults !== undefined && !isInt(brc.numberOfResults, 1, 1000)) return invalid("Value at 'rerankingConfiguration.bedrockRerankingConfiguration.numberOfResults' failed to satisfy constraint: Member must have value between 1 and 1000");
  if (ctx.knobs.models && !ctx.knobs.models.includes(m[2])) return invalid('The provided model identifier is invalid.');
  const ranked = texts.map((t, index) => ({ index, relevanceScore: simRelevance(query, t) })).sort((x, y) => y.relevanceScore - x.relevanceScore);
  const results = ranked.slice(0, (brc.numberOfResults as number | undefined) ?? ranked.length);
  return { kind: 'json', status: 200, body: JSON.stringify({ results }), headers: { 'content-type': 'application/json', 'x-amzn-requestid': `sim-${ctx.rid}` }, chunks: 1 };
}
