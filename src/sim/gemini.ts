/**
 * Google Gemini API wire format (v1beta):
 *   POST /v1beta/models/<model>:generateContent
 *   POST /v1beta/models/<model>:countTokens                     (`totalTokens`, as the usage's promptTokenCount)
 *   POST /v1beta/models/<model>:streamGenerateContent?alt=sse   (SSE, one GenerateContentResponse per event)
 *   POST /v1beta/models/<model>:streamGenerateContent           (no alt=sse: one JSON array of the chunks, as Google does)
 *   GET  /v1beta/models
 * (under `/<provider>/…` like the other protocols), with Google's error envelope `{"error":{"code","message","status"}}`.
 *
 * Behaviour (deterministic, same knobs and text rules as the OpenAI protocol, see text.ts):
 * - text replies as in openai.ts; `functionCall` parts when `tools[].functionDeclarations` are given (mode AUTO calls
 *   unless the last content is a function response; ANY forces, honouring `allowedFunctionNames`; NONE never; the
 *   `toolCall` knob overrides); arguments sampled from `parametersJsonSchema` / `parameters` (OpenAPI upper-case types
 *   accepted);
 * - JSON output when `generationConfig.responseMimeType` is `application/json`: a sample of `responseJsonSchema` /
 *   `responseSchema`, else `{"reply": "<text>"}`;
 * - thinking: with `thinkingConfig.includeThoughts` (and a budget other than 0) a thought part comes first (streamed
 *   piece by piece); `thoughtsTokenCount` = the `reasoningTokens` knob, else the thought pieces; a budget of 0 means no
 *   thoughts. When there were thoughts, a `thoughtSignature` (base64) rides on the functionCall part, or on the last text
 *   part (non-streaming) / on an empty text part in the final chunk (streaming), as Gemini does;
 * - usage: promptTokenCount = sum over contents of (ceil(chars/4) + 3), 258 per inline/file data part, plus the
 *   system instruction and the tools' JSON; candidatesTokenCount = text pieces (tool call: argument pieces + 1);
 *   `cachedContentTokenCount` = the `cachedTokens` knob (capped at the prompt); zero counts are omitted, as Gemini does;
 * - `maxOutputTokens` covers thoughts and visible output (finishReason MAX_TOKENS when cut); `stopSequences` apply;
 * - safety block through the `x-sim-gemini-block` request header (also settable as a provider header in a catalog):
 *   `prompt` → no candidates and `promptFeedback.blockReason: SAFETY`; `response` → a candidate with finishReason
 *   SAFETY and no content;
 * - errors: Google statuses (`INVALID_ARGUMENT`, `RESOURCE_EXHAUSTED` with a `google.rpc.RetryInfo` detail giving
 *   `retryDelay` = the `retryAfter` knob or 1s, `UNAVAILABLE` "The model is overloaded…", …). Gemini sends no
 *   `Retry-After` header: one is added only when the `retryAfter` knob is set. A bad API key (when the simulator has
 *   one) is answered like Google: 400 `API_KEY_INVALID` when a key was sent, 403 `PERMISSION_DENIED` when none was.
 *   In-stream errors (`errorAfterChunks`) are `data: {"error":{"code":500,…,"status":"INTERNAL"}}`.
 * Content events (paced, counted by the chunk knobs) are the thought pieces, the text pieces and the function call; the
 * final chunk (finishReason, full usage) is not a content event, so a cut stream lacks its finishReason.
 */
import type { Endpoint, EndpointContext, JsonReply, Reply, SseEvent } from './protocol.js';
import { applyStop, replyPieces, sampleFromSchema, splitFixed, tokensOfChars, contentPieces } from './text.js';
import { asArray, DEFAULT_MODEL, geminiProtocol, isObj, JSON_HEADERS, PATH, type Obj } from './gemini-errors.js';
import { firstDocumentError, geminiDocument } from './documents.js';

export { geminiProtocol } from './gemini-errors.js';

const DEFAULT_COMPLETION_TOKENS = 12;
const THOUGHT_PIECES = 6;
const MEDIA_TOKENS = 258;
/** Request header selecting a safety block (`prompt` or `response`). */
export const GEMINI_BLOCK_HEADER = 'x-sim-gemini-block';

const invalid = (ctx: EndpointContext, message: string): JsonReply => geminiProtocol.error(400, ctx, { message });

// ---------------------------------------------------------------- request reading

interface Parsed {
  contents: Array<{ role: string; parts: Obj[] }>;
  system: Obj[];
}

/** Validation as the API does it; contents and parts may be single objects (the API accepts both). */
function parse(ctx: EndpointContext): Parsed | JsonReply {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'Invalid JSON payload received. Expected an object.');
  if (b.contents === undefined) return invalid(ctx, '* GenerateContentRequest.contents: contents is not specified\n');
  const contents: Parsed['contents'] = [];
  const list = asArray(b.contents);
  if (list.length === 0) return invalid(ctx, '* GenerateContentRequest.contents: contents is not specified\n');
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (!isObj(c)) return invalid(ctx, `Invalid JSON payload received. Invalid value at 'contents[${i}]'.`);
    const role = c.role === undefined ? 'user' : c.role;
    if (role !== 'user' && role !== 'model' && role !== 'function') return invalid(ctx, 'Please use a valid role: user, model.');
    const parts = asArray(c.parts).filter(isObj);
    if (parts.length === 0) return invalid(ctx, `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.\n`);
    const docErr = firstDocumentError([[parts, `contents[${i}].parts`]], geminiDocument);
    if (docErr) return invalid(ctx, `* GenerateContentRequest.${docErr}\n`);
    contents.push({ role, parts });
  }
  const si = isObj(b.systemInstruction) ? b.systemInstruction : isObj(b.system_instruction) ? b.system_instruction : undefined;
  return { contents, system: si ? asArray(si.parts).filter(isObj) : [] };
}

function partChars(p: Obj): number {
  if (typeof p.text === 'string') return p.text.length;
  if (isObj(p.functionCall)) return JSON.stringify(p.functionCall).length;
  if (isObj(p.functionResponse)) return JSON.stringify(p.functionResponse).length;
  return 0;
}

/** promptTokenCount: per content ceil(chars/4) + 3 (258 per media part), system instruction, tools' JSON. */
export function geminiPromptTokens(body: Obj, parsed: Parsed): number {
  let n = 0;
  const count = (parts: Obj[]) => {
    let chars = 0;
    for (const p of parts) {
      if (isObj(p.inlineData) || isObj(p.fileData)) n += MEDIA_TOKENS;
      else chars += partChars(p);
    }
    n += tokensOfChars(chars) + 3;
  };
  for (const c of parsed.contents) count(c.parts);
  if (parsed.system.length > 0) count(parsed.system);
  const tools = asArray(body.tools);
  if (tools.length > 0) n += tokensOfChars(JSON.stringify(tools).length);
  return n;
}

const textOf = (parts: Obj[]) => parts.map((p) => (typeof p.text === 'string' && p.thought !== true ? p.text : '')).join('');

/** OpenAPI-style schemas (`type: "OBJECT"`) → lower-case JSON Schema types, for sampling. */
function normalizeSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(normalizeSchema);
  if (!isObj(s)) return s;
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'type' && typeof v === 'string') out[k] = v.toLowerCase();
    else if (k === 'type' && Array.isArray(v)) out[k] = v.map((t) => (typeof t === 'string' ? t.toLowerCase() : t));
    else if (k === 'enum' || k === 'required' || k === 'const' || k === 'example' || k === 'default') out[k] = v;
    else out[k] = normalizeSchema(v);
  }
  return out;
}

interface ToolPick {
  name: string;
  schema: unknown;
}

function pickTool(body: Obj, contents: Parsed['contents'], toolKnob: boolean | undefined, toolName?: string): ToolPick | undefined {
  if (toolKnob === false) return undefined;
  const fns: ToolPick[] = [];
  for (const t of asArray(body.tools)) {
    if (!isObj(t)) continue;
    for (const d of asArray(t.functionDeclarations ?? t.function_declarations)) {
      if (isObj(d) && typeof d.name === 'string') fns.push({ name: d.name, schema: d.parametersJsonSchema ?? d.parameters });
    }
  }
  if (fns.length === 0) return undefined;
  const tc = isObj(body.toolConfig) ? body.toolConfig : isObj(body.tool_config) ? body.tool_config : {};
  const fcc = isObj(tc.functionCallingConfig) ? tc.functionCallingConfig : isObj(tc.function_calling_config) ? tc.function_calling_config : {};
  const mode = typeof fcc.mode === 'string' ? fcc.mode.toUpperCase() : 'AUTO';
  if (mode === 'NONE') return undefined;
  const forced = mode === 'ANY' || mode === 'VALIDATED';
  const allowed = asArray(fcc.allowedFunctionNames ?? fcc.allowed_function_names).filter((s): s is string => typeof s === 'string');
  const last = contents[contents.length - 1];
  const afterTool = last.parts.some((p) => isObj(p.functionResponse));
  if (!(toolKnob ?? (forced || !afterTool))) return undefined;
  return (allowed.length > 0 ? fns.find((f) => allowed.includes(f.name)) : undefined) ?? fns.find((f) => f.name === toolName) ?? fns[0];
}

// ---------------------------------------------------------------- generation

interface Generation {
  thoughts: string[];
  thoughtsTokens: number;
  /** Text pieces (empty for a function call). */
  pieces: string[];
  call?: { name: string; args: unknown };
  /** Tokens of the visible output. */
  candidates: number;
  finish: 'STOP' | 'MAX_TOKENS';
  signature?: string;
}

function generate(ctx: EndpointContext, body: Obj, contents: Parsed['contents']): Generation {
  const k = ctx.knobs;
  const gc = isObj(body.generationConfig) ? body.generationConfig : isObj(body.generation_config) ? body.generation_config : {};
  const max = typeof gc.maxOutputTokens === 'number' ? gc.maxOutputTokens : Infinity;
  const tc = isObj(gc.thinkingConfig) ? gc.thinkingConfig : {};
  const thinkingOff = tc.thinkingBudget === 0;

  const last = contents[contents.length - 1];
  const fr = last.parts.map((p) => p.functionResponse).find(isObj);
  let seed = '';
  for (let i = contents.length - 1; i >= 0 && seed === ''; i--) if (contents[i].role === 'user') seed = textOf(contents[i].parts);
  if (fr) seed = JSON.stringify(fr.response ?? {});
  const lead = fr ? 'Simulated reply using tool result:' : 'Simulated reply to:';

  const thoughts = tc.includeThoughts === true && !thinkingOff ? replyPieces('Considering the request:', seed, THOUGHT_PIECES) : [];
  const thoughtsTokens = thinkingOff ? 0 : (k.reasoningTokens ?? thoughts.length);
  const budget = Math.max(0, max - thoughtsTokens);
  const signature = thoughtsTokens > 0 ? Buffer.from(`sim-thought-signature:${ctx.rid}`).toString('base64') : undefined;

  const tool = k.content === undefined ? pickTool(body, contents, k.toolCall, k.toolName) : undefined;
  if (tool) {
    const args = sampleFromSchema(normalizeSchema(tool.schema ?? { type: 'object' }));
    const tokens = splitFixed(JSON.stringify(args)).length + 1;
    if (tokens > budget) return { thoughts, thoughtsTokens, pieces: [], candidates: 0, finish: 'MAX_TOKENS', signature };
    return { thoughts, thoughtsTokens, pieces: [], call: { name: tool.name, args }, candidates: tokens, finish: 'STOP', signature };
  }

  let pieces: string[];
  if (k.content !== undefined) pieces = contentPieces(k.content, k.chunkChars);
  else if (gc.responseMimeType === 'application/json') {
    const schema = gc.responseJsonSchema ?? gc.responseSchema;
    pieces = schema !== undefined
      ? splitFixed(JSON.stringify(sampleFromSchema(normalizeSchema(schema))))
      : splitFixed(JSON.stringify({ reply: replyPieces(lead, seed, k.completionTokens ?? DEFAULT_COMPLETION_TOKENS).join('') }));
  } else pieces = replyPieces(lead, seed, k.completionTokens ?? DEFAULT_COMPLETION_TOKENS);

  const stops = asArray(gc.stopSequences).filter((s): s is string => typeof s === 'string');
  if (stops.length > 0) pieces = applyStop(pieces, stops) ?? pieces;
  let finish: Generation['finish'] = 'STOP';
  if (pieces.length > budget) {
    pieces = pieces.slice(0, budget);
    finish = 'MAX_TOKENS';
  }
  return { thoughts, thoughtsTokens, pieces, candidates: pieces.length, finish, signature };
}

function usageOf(ctx: EndpointContext, prompt: number, gen: Generation | undefined): Obj {
  const candidates = gen?.candidates ?? 0;
  const thoughts = gen?.thoughtsTokens ?? 0;
  const cached = Math.min(ctx.knobs.cachedTokens ?? 0, prompt);
  const u: Obj = { promptTokenCount: prompt };
  if (candidates > 0) u.candidatesTokenCount = candidates;
  u.totalTokenCount = prompt + candidates + thoughts;
  if (cached > 0) u.cachedContentTokenCount = cached;
  u.promptTokensDetails = [{ modality: 'TEXT', tokenCount: prompt }];
  if (cached > 0) u.cacheTokensDetails = [{ modality: 'TEXT', tokenCount: cached }];
  if (thoughts > 0) u.thoughtsTokenCount = thoughts;
  return u;
}

// ---------------------------------------------------------------- rendering

interface Meta {
  model: string;
  responseId: string;
}

const response = (meta: Meta, candidates: Obj[] | undefined, usage: Obj, extra: Obj = {}): Obj => ({
  ...(candidates ? { candidates } : {}),
  ...extra,
  usageMetadata: usage,
  modelVersion: meta.model,
  responseId: meta.responseId,
});

const candidate = (parts: Obj[] | undefined, finishReason?: string, extra: Obj = {}): Obj => ({
  ...(parts ? { content: { parts, role: 'model' } } : {}),
  ...(finishReason ? { finishReason } : {}),
  index: 0,
  ...extra,
});

function fullParts(gen: Generation): Obj[] {
  const parts: Obj[] = [];
  if (gen.thoughts.length > 0) parts.push({ text: gen.thoughts.join(''), thought: true });
  if (gen.call) parts.push({ functionCall: gen.call, ...(gen.signature ? { thoughtSignature: gen.signature } : {}) });
  else if (gen.pieces.length > 0) parts.push({ text: gen.pieces.join(''), ...(gen.signature ? { thoughtSignature: gen.signature } : {}) });
  else if (gen.signature) parts.push({ text: '', thoughtSignature: gen.signature });
  return parts;
}

/** Stream chunks; `content` marks the paced, fault-counted ones. */
function chunks(meta: Meta, gen: Generation, prompt: number, usage: Obj): Array<{ value: Obj; content: boolean }> {
  const running: Obj = { promptTokenCount: prompt, totalTokenCount: prompt, promptTokensDetails: [{ modality: 'TEXT', tokenCount: prompt }] };
  const out: Array<{ value: Obj; content: boolean }> = [];
  for (const t of gen.thoughts) out.push({ value: response(meta, [candidate([{ text: t, thought: true }])], running), content: true });
  if (gen.call) {
    const part = { functionCall: gen.call, ...(gen.signature ? { thoughtSignature: gen.signature } : {}) };
    out.push({ value: response(meta, [candidate([part])], running), content: true });
  } else for (const p of gen.pieces) out.push({ value: response(meta, [candidate([{ text: p }])], running), content: true });
  const lastPart: Obj = { text: '' };
  if (gen.signature && !gen.call) lastPart.thoughtSignature = gen.signature;
  out.push({ value: response(meta, [candidate([lastPart], gen.finish)], usage), content: false });
  return out;
}

const SAFETY_RATINGS = (blocked: boolean): Obj[] => [
  { category: 'HARM_CATEGORY_SEXUALLY_EXPLICIT', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_HATE_SPEECH', probability: 'NEGLIGIBLE' },
  { category: 'HARM_CATEGORY_HARASSMENT', probability: blocked ? 'HIGH' : 'NEGLIGIBLE', ...(blocked ? { blocked: true } : {}) },
  { category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'NEGLIGIBLE' },
];

export function generateContent(ctx: EndpointContext): Reply {
  const m = PATH.exec(ctx.path);
  if (!m) return geminiProtocol.error(404, ctx);
  const model = decodeURIComponent(m[1]);
  const stream = m[2].toLowerCase() === 'streamgeneratecontent';
  const sse = stream && new URLSearchParams(ctx.query).get('alt') === 'sse';

  const parsed = parse(ctx);
  if ('kind' in parsed) return parsed;
  const models = ctx.knobs.models;
  if (models !== undefined && !models.includes(model)) return geminiProtocol.error(404, { ...ctx, knobs: { ...ctx.knobs, model } });

  const body = ctx.body as Obj;
  const meta: Meta = { model: ctx.knobs.model ?? model, responseId: `simGem${ctx.rid}` };
  const prompt = geminiPromptTokens(body, parsed);

  let values: Array<{ value: Obj; content: boolean }>;
  let contentChunks: number;
  const block = ctx.headers[GEMINI_BLOCK_HEADER];
  const blockKind = Array.isArray(block) ? block[block.length - 1] : block;
  if (blockKind === 'prompt') {
    const v = response(meta, undefined, usageOf(ctx, prompt, undefined), { promptFeedback: { blockReason: 'SAFETY', safetyRatings: SAFETY_RATINGS(true) } });
    values = [{ value: v, content: false }];
    contentChunks = 0;
  } else if (blockKind === 'response') {
    const v = response(meta, [candidate(undefined, 'SAFETY', { safetyRatings: SAFETY_RATINGS(true) })], usageOf(ctx, prompt, undefined));
    values = [{ value: v, content: false }];
    contentChunks = 0;
  } else {
    const gen = generate(ctx, body, parsed.contents);
    const usage = usageOf(ctx, prompt, gen);
    contentChunks = gen.thoughts.length + (gen.call ? 1 : gen.pieces.length);
    if (stream) values = chunks(meta, gen, prompt, usage);
    else {
      const parts = fullParts(gen);
      values = [{ value: response(meta, [candidate(parts.length > 0 ? parts : undefined, gen.finish)], usage), content: false }];
    }
  }

  if (sse) {
    const events: SseEvent[] = values.map((v) => ({ data: JSON.stringify(v.value), ...(v.content ? { content: true } : {}) }));
    return { kind: 'sse', events };
  }
  const text = stream ? JSON.stringify(values.map((v) => v.value)) : JSON.stringify(values[0].value);
  return { kind: 'json', status: 200, body: text, headers: JSON_HEADERS, chunks: contentChunks };
}

function listModels(ctx: EndpointContext): Reply {
  const ids = ctx.knobs.models ?? [ctx.knobs.model ?? DEFAULT_MODEL];
  const models = ids.map((id) => ({
    name: `models/${id}`,
    version: '001',
    displayName: id,
    description: 'Simulated Gemini model',
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: ['generateContent', 'countTokens'],
    thinking: true,
  }));
  return { kind: 'json', status: 200, body: JSON.stringify({ models }), headers: JSON_HEADERS };
}

const COUNT_PATH = /^\/v1beta\/models\/([^/:]+)(?::|%3A)countTokens$/i;

/**
 * `models/<m>:countTokens`: `{contents}` or `{generateContentRequest: {model, contents, systemInstruction, tools, …}}`
 * → `{totalTokens, promptTokensDetails}`, counted as the generateContent usage's `promptTokenCount` is.
 */
function countTokens(ctx: EndpointContext): Reply {
  const b = ctx.body;
  const inner = isObj(b) && isObj(b.generateContentRequest) ? b.generateContentRequest : b;
  const parsed = parse({ ...ctx, body: inner });
  if ('kind' in parsed) return parsed;
  const total = geminiPromptTokens(inner as Obj, parsed);
  return { kind: 'json', status: 200, body: JSON.stringify({ totalTokens: total, promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }] }), headers: JSON_HEADERS };
}

export const geminiEndpoints: Endpoint[] = [
  { method: 'POST', path: PATH, protocol: geminiProtocol, modelCall: true, handle: generateContent },
  { method: 'POST', path: COUNT_PATH, protocol: geminiProtocol, modelCall: true, handle: countTokens },
  { method: 'GET', path: '/v1beta/models', protocol: geminiProtocol, modelCall: false, handle: listModels },
];
