/**
 * IR request → Gemini `generateContent` / `streamGenerateContent?alt=sse` HTTP request.
 *
 * Design choices (see also the docs of `googleAdapter` in index.ts):
 * - Auth: the key goes in the `x-goog-api-key` header, never in the `?key=` query parameter, so it cannot land in
 *   access logs or error messages that echo URLs.
 * - Roles: IR `user` → `user`, `assistant` → `model`; consecutive contents of the same role are merged (Gemini wants
 *   alternation). Tool results travel as `functionResponse` parts of a `user` content.
 * - Tool-call ids: Gemini function calls carry no id, only a name. A `tool_result` is matched to its call by looking up
 *   `tool_call_id` among the tool calls of earlier messages (the most recent one wins) and sending that call's name;
 *   ids are never sent upstream. An unknown id is a 400.
 * - Thought signatures: Gemini wants a signature back on the exact part it arrived on. The response side (see
 *   response.ts) turns a signature on a non-thought part into an empty-text IR reasoning part placed right before that
 *   part, and keeps a signature on a thought part on that reasoning. Here, an empty-text reasoning's signature goes on
 *   the next part of the message (or on an empty text part when nothing follows); a signed reasoning with text becomes
 *   a `thought: true` part with its signature. Unsigned reasoning text and redacted reasoning are dropped: Gemini reads
 *   nothing from unsigned thought text, and redacted reasoning is another provider's format.
 * - Tool schemas and response schemas are sent as JSON Schema (`parametersJsonSchema`, `responseJsonSchema`), not
 *   converted to the OpenAPI-subset `parameters` / `responseSchema`: JSON Schema keeps `additionalProperties`, `anyOf`,
 *   `$ref`/`$defs`, nullable type arrays. `cleanSchema` only drops `$schema` and the siblings of `$ref` (which the
 *   docs forbid).
 * - Thinking: `reasoning.max_tokens` → `thinkingBudget` as is; effort none → 0 (off), minimal 512, low 2048,
 *   medium 8192, high 16384, xhigh 24576 (the 2.5 Flash maximum), max 32768 (the 2.5 Pro maximum; Flash rejects it);
 *   `enabled: false` → 0; `enabled: true` alone → -1 (dynamic). `includeThoughts` is set when a reasoning config is given,
 *   thinking is not off and `exclude` is not set. Without a reasoning config nothing is sent (model default).
 * - Not mapped (no Gemini equivalent): `parallel_tool_calls`, `user`, message `name`, cache-control marks (Gemini
 *   caches implicitly), image `detail`.
 */
import { withoutSystemTurns } from '../../core/system-turns.js';
import { toolArgsObject, type IrDocument, type IrImage, type IrMessage, type IrPart, type IrReasoningConfig, type IrRequest, type IrResponseFormat, type IrTool, type IrToolChoice, type IrToolResult } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import {
  isObj,
  type GeminiContent,
  type GeminiFunctionDeclaration,
  type GeminiGenerationConfig,
  type GeminiPart,
  type GeminiRequest,
  type GeminiThinkingConfig,
  type Obj,
} from './types.js';

/** Thinking budget (tokens) per IR effort. */
export const EFFORT_BUDGET: Readonly<Record<NonNullable<IrReasoningConfig['effort']>, number>> = {
  none: 0,
  minimal: 512,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

/** A model's resource name: `models/<id>` (or a `tunedModels/…` name as given). */
export function geminiModelPath(model: string): string {
  return /^(models|tunedModels)\//.test(model) ? model : `models/${model}`;
}

/** `…/models/<model>:<method>`: `generateContent`, `streamGenerateContent?alt=sse`, `countTokens`, … */
export function geminiMethodUrl(baseUrl: string, model: string, method: string): URL {
  return new URL(`${baseUrl.replace(/\/+$/, '')}/${geminiModelPath(model)}:${method}`);
}

/** `…/models/<model>:generateContent`, or `:streamGenerateContent?alt=sse` when streaming. */
export function geminiUrl(baseUrl: string, model: string, stream: boolean): URL {
  return geminiMethodUrl(baseUrl, model, stream ? 'streamGenerateContent?alt=sse' : 'generateContent');
}

export function geminiHeaders(ctx: UpstreamContext, stream: boolean): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    'user-agent': 'model-gateway/0.1',
    ...ctx.provider.headers,
  };
  if (ctx.apiKey) h['x-goog-api-key'] = ctx.apiKey;
  return h;
}

export function buildGeminiRequest(req: IrRequest, ctx: UpstreamContext): UpstreamHttpRequest {
  const model = ctx.endpoint.upstreamModel || req.model;
  return {
    url: geminiUrl(ctx.provider.baseUrl, model, req.stream),
    headers: geminiHeaders(ctx, req.stream),
    body: JSON.stringify(toGeminiBody(req)),
  };
}

/** The JSON body of a generateContent request. */
export function toGeminiBody(req: IrRequest): GeminiRequest {
  // Gemini has no system turn: leading ones join systemInstruction, later ones are user text (src/core/system-turns.ts).
  const turns = withoutSystemTurns(req.messages);
  const body: GeminiRequest = { contents: toContents(turns.messages) };
  const system = [...req.system, ...turns.system].filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  if (system.length > 0) body.systemInstruction = { parts: system };
  if (req.tools && req.tools.length > 0) {
    body.tools = [{ functionDeclarations: req.tools.map(toDeclaration) }];
    if (req.tool_choice) body.toolConfig = { functionCallingConfig: toCallingConfig(req.tool_choice) };
  }
  const gen = toGenerationConfig(req);
  if (gen) body.generationConfig = gen;
  if (req.modalities?.includes('image')) body.generationConfig = { ...body.generationConfig, responseModalities: ['TEXT', 'IMAGE'] };
  return body;
}

// ---------------------------------------------------------------- contents

/** IR messages → Gemini contents (roles user/model, same-role neighbours merged, empty messages skipped). */
export function toContents(messages: IrMessage[]): GeminiContent[] {
  const out: GeminiContent[] = [];
  /** tool_call_id → function name, from the messages seen so far (later calls override earlier ones). */
  const names = new Map<string, string>();
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'model' : 'user';
    const parts = toParts(m.content, role, names);
    if (parts.length === 0) continue;
    const last = out[out.length - 1];
    if (last && last.role === role) last.parts.push(...parts);
    else out.push({ role, parts });
  }
  return out;
}

function toParts(content: IrPart[], role: 'user' | 'model', names: Map<string, string>): GeminiPart[] {
  const out: GeminiPart[] = [];
  /** Signature of an empty-text reasoning part, waiting for the part it belongs to. */
  let pending: string | undefined;
  const push = (p: GeminiPart) => {
    if (pending !== undefined) {
      if (p.thoughtSignature === undefined) p.thoughtSignature = pending;
      else out.push({ text: '', thoughtSignature: pending });
      pending = undefined;
    }
    out.push(p);
  };

  for (const part of content) {
    switch (part.type) {
      case 'text':
        if (part.text !== '') push({ text: part.text });
        break;
      case 'refusal':
        if (part.text !== '') push({ text: part.text });
        break;
      case 'image': {
        const p = imagePart(part);
        if (p) push(p);
        break;
      }
      case 'document': {
        const p = documentPart(part);
        if (p) push(p);
        break;
      }
      case 'tool_call':
        names.set(part.id, part.name);
        push({ functionCall: { name: part.name, args: toolArgsObject(part.arguments) } });
        break;
      case 'tool_result':
        for (const p of toolResultParts(part, names)) push(p);
        break;
      case 'reasoning':
        if (role !== 'model') break;
        // Another provider's signature (an Anthropic one) would be refused: such reasoning is dropped like unsigned.
        if (part.origin !== undefined && part.origin !== 'google') break;
        if (part.text !== '') {
          // Unsigned thought text carries nothing Gemini can use; a signed one goes back as the thought part it was.
          if (part.signature) push({ text: part.text, thought: true, thoughtSignature: part.signature });
        } else if (part.signature) {
          if (pending !== undefined) out.push({ text: '', thoughtSignature: pending });
          pending = part.signature;
        }
        break;
      case 'redacted_reasoning':
        break;
    }
  }
  if (pending !== undefined) out.push({ text: '', thoughtSignature: pending });
  return out;
}

function toolResultParts(part: IrToolResult, names: Map<string, string>): GeminiPart[] {
  const name = names.get(part.tool_call_id);
  if (name === undefined) {
    throw new UpstreamError(400, `Tool result refers to an unknown tool call id: ${part.tool_call_id}`, 'invalid_request', null, null);
  }
  let text: string;
  const images: GeminiPart[] = [];
  if (typeof part.content === 'string') text = part.content;
  else {
    const texts: string[] = [];
    for (const p of part.content) {
      if (p.type === 'text') texts.push(p.text);
      else {
        const img = imagePart(p);
        if (img) images.push(img);
      }
    }
    text = texts.join('\n');
  }
  // The SDKs' convention: `output`/`content` for a result, `error` for a failure.
  const response: Obj = part.is_error ? { error: text } : { content: text };
  return [{ functionResponse: { name, response } }, ...images];
}

const EXT_MIME: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
};

function guessMime(url: string): string | undefined {
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    /* not a URL: use as is */
  }
  const m = /\.([a-z0-9]+)$/i.exec(path);
  return m ? EXT_MIME[m[1].toLowerCase()] : undefined;
}

/** Base64 image → `inlineData`; `data:` URL → decoded `inlineData`; http(s)/gs URL → `fileData`. */
export function imagePart(img: IrImage): GeminiPart | null {
  if (img.data) return { inlineData: { mimeType: img.media_type ?? 'image/png', data: img.data } };
  const url = img.url;
  if (!url) return null;
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma === -1) return null;
    const meta = url.slice(5, comma).split(';');
    const payload = url.slice(comma + 1);
    const base64 = meta.slice(1).some((p) => p.toLowerCase() === 'base64');
    const data = base64 ? payload.replace(/\s+/g, '') : Buffer.from(decodeURIComponent(payload), 'utf8').toString('base64');
    return { inlineData: { mimeType: meta[0] || img.media_type || 'image/png', data } };
  }
  const mimeType = img.media_type ?? guessMime(url);
  return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
}

/**
 * A document → `inlineData` (inline data, a `data:` URL) or `fileData` (a Gemini file URI given as the file id, or a
 * URL), with its media type (PDF when unknown).
 */
export function documentPart(doc: IrDocument): GeminiPart | null {
  const mediaType = doc.media_type ?? (doc.url ? guessMime(doc.url) : undefined) ?? 'application/pdf';
  return imagePart({ type: 'image', data: doc.data, url: doc.data === undefined ? (doc.file_id ?? doc.url) : undefined, media_type: mediaType });
}

// ---------------------------------------------------------------- tools

const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else', 'additionalItems']);

/**
 * A JSON Schema made acceptable to `parametersJsonSchema` / `responseJsonSchema`: drops `$schema` and, on a sub-schema
 * with `$ref`, every sibling that does not start with `$` (the docs forbid them). Everything else is kept; keywords
 * Gemini does not support are ignored upstream.
 */
export function cleanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(cleanSchema);
  if (!isObj(schema)) return schema;
  const hasRef = typeof schema.$ref === 'string';
  const out: Obj = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === '$schema') continue;
    if (hasRef && !k.startsWith('$')) continue;
    if (SCHEMA_MAPS.has(k) && isObj(v)) out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, cleanSchema(s)]));
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map(cleanSchema);
    else if (SCHEMA_VALUES.has(k)) out[k] = cleanSchema(v);
    else out[k] = v;
  }
  return out;
}

/** True for a parameters schema that declares nothing (no properties): such a function is declared without one. */
function emptyParameters(p: Obj | undefined): boolean {
  if (!p) return true;
  const keys = Object.keys(p).filter((k) => k !== '$schema' && k !== 'type' && k !== 'additionalProperties' && k !== 'properties');
  return keys.length === 0 && (!isObj(p.properties) || Object.keys(p.properties).length === 0);
}

function toDeclaration(t: IrTool): GeminiFunctionDeclaration {
  const d: GeminiFunctionDeclaration = { name: t.name };
  if (t.description) d.description = t.description;
  if (!emptyParameters(t.parameters)) d.parametersJsonSchema = cleanSchema(t.parameters) as Obj;
  return d;
}

function toCallingConfig(c: IrToolChoice): { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } {
  switch (c.type) {
    case 'none':
      return { mode: 'NONE' };
    case 'required':
      return { mode: 'ANY' };
    case 'tool':
      return { mode: 'ANY', allowedFunctionNames: [c.name] };
    default:
      return { mode: 'AUTO' };
  }
}

// ---------------------------------------------------------------- generation config

/** IR reasoning config → `thinkingConfig` (undefined when there is nothing to send). */
export function toThinkingConfig(r: IrReasoningConfig | undefined): GeminiThinkingConfig | undefined {
  if (!r) return undefined;
  let budget: number | undefined;
  if (r.enabled === false || r.effort === 'none') budget = 0;
  else if (typeof r.max_tokens === 'number' && Number.isFinite(r.max_tokens)) budget = Math.max(0, Math.floor(r.max_tokens));
  else if (r.effort) budget = EFFORT_BUDGET[r.effort];
  else if (r.enabled === true) budget = -1;
  const cfg: GeminiThinkingConfig = {};
  if (budget !== undefined) cfg.thinkingBudget = budget;
  if (budget !== 0 && r.exclude !== true) cfg.includeThoughts = true;
  return Object.keys(cfg).length > 0 ? cfg : undefined;
}

function applyResponseFormat(g: GeminiGenerationConfig, rf: IrResponseFormat | undefined): void {
  if (!rf || rf.type === 'text') return;
  g.responseMimeType = 'application/json';
  if (rf.type === 'json_schema') g.responseJsonSchema = cleanSchema(rf.schema) as Obj;
}

function toGenerationConfig(req: IrRequest): GeminiGenerationConfig | undefined {
  const g: GeminiGenerationConfig = {};
  if (req.temperature !== undefined) g.temperature = req.temperature;
  if (req.top_p !== undefined) g.topP = req.top_p;
  if (req.top_k !== undefined) g.topK = req.top_k;
  if (req.max_tokens !== undefined) g.maxOutputTokens = req.max_tokens;
  if (req.stop && req.stop.length > 0) g.stopSequences = req.stop;
  if (req.seed !== undefined) g.seed = req.seed;
  if (req.presence_penalty !== undefined) g.presencePenalty = req.presence_penalty;
  if (req.frequency_penalty !== undefined) g.frequencyPenalty = req.frequency_penalty;
  applyResponseFormat(g, req.response_format);
  const thinking = toThinkingConfig(req.reasoning);
  if (thinking) g.thinkingConfig = thinking;
  return Object.keys(g).length > 0 ? g : undefined;
}
