/**
 * The Gemini skin (`POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`): a Gemini
 * `GenerateContentRequest` → IR. The answer side (IR → `GenerateContentResponse`, stream chunks, Google's error shape)
 * is in gemini-output.ts; the adapter object is assembled at the end of this file.
 *
 * Decisions:
 * - Roles: `user` (and the legacy `function` role) → IR user, `model` → IR assistant; a content without role is a
 *   user content, as Google reads it.
 * - Tool-call ids: Gemini calls carry an optional `id`. A `functionCall` without one gets `call_<n>` (n counting calls in
 *   the request); a `functionResponse` is tied to its call by `id` when given, else to the earliest unanswered call of
 *   the same name. A response that answers no earlier call is a 400. The gateway's answers always carry an id on each
 *   `functionCall`, so clients that echo it (Gemini CLI, @google/genai chats) round-trip exactly.
 * - Function results: `response` `{output: "…"}` or `{content: "…"}` (one string field, the SDKs' convention) is the
 *   result text as is; `{error: "…"}` is an error result; any other object is sent as its JSON text.
 * - Thoughts: `thought: true` parts → IR reasoning (consecutive unsigned thoughts merge; a `thoughtSignature` on a thought
 *   part is its signature and ends it); a `thoughtSignature` on any other part → an empty-text signed reasoning placed
 *   before the part (the Google upstream adapter's own convention, so Gemini signatures go back on the same part). A
 *   thought part whose signature starts with `gateway-redacted:` is redacted reasoning (how the gateway hands out
 *   another provider's encrypted reasoning, see gemini-output.ts).
 * - Schemas: `parametersJsonSchema` / `responseJsonSchema` are JSON Schema and pass as they are; the OpenAPI-subset
 *   `parameters` / `responseSchema` are converted (upper-case types lowered, `nullable` → a `null` type, `propertyOrdering`
 *   dropped).
 * - `toolConfig.functionCallingConfig`: AUTO/VALIDATED → auto, NONE → none, ANY → required, or the one tool when
 *   `allowedFunctionNames` names exactly one; with several names, the declared tools are narrowed to them.
 * - Thinking: `thinkingBudget` 0 → effort none, -1 → dynamic (enabled), N → a budget of N; `thinkingLevel` → effort;
 *   `includeThoughts: true` asks for the thought text.
 * - Built-in tools: `googleSearch` (or `google_search`) is the gateway's web search server tool, run in its own loop
 *   (`geminiServerTools`, docs/server-tools.md) for any upstream; it is left out of the IR's tools.
 * - Refused with a 400 naming the field: `candidateCount` > 1, `cachedContent` (a cache on Google's side that other
 *   upstreams cannot read), the other built-in tools (`codeExecution`, `urlContext`, …), response MIME types other
 *   than text/plain and application/json, `responseModalities` other than TEXT and IMAGE. Ignored: `safetySettings`,
 *   `labels`, `responseModalities` of text only, `mediaResolution` and other knobs that no other protocol has.
 * - `responseModalities` with IMAGE asks an image-output model for images (the IR's `modalities`); generated images
 *   come back as `inlineData` parts (gemini-output.ts).
 */
import type { IrDocument, IrImage, IrMessage, IrPart, IrReasoningConfig, IrRequest, IrResponseFormat, IrText, IrTool, IrToolChoice } from '../core/ir.js';
import type { InboundAdapter } from '../core/adapters.js';
import { forEachObject, invalid, isObject, num, str, type Json } from './common.js';
import { ANTHROPIC_SIGNATURE_PREFIX, geminiErrorBody, geminiFromIr, GeminiStreamEncoder, REDACTED_PREFIX } from './gemini-output.js';


// ---- model ids ---------------------------------------------------------------------------------------------------

/**
 * The gateway model id of a Gemini path model: `models/` dropped; an id with an author (`google/gemini-2.5-pro`, sent
 * URL-encoded or not) as is; a bare Gemini id (`gemini-2.5-pro`) → `google/<id>` when the catalog has that model, else
 * as given (routing then answers 404). The one place bare Gemini ids are mapped.
 */
export function geminiModelId(pathModel: string, has: (id: string) => boolean): string {
  const id = pathModel.replace(/^models\//, '');
  if (id.includes('/')) return id;
  return has(`google/${id}`) ? `google/${id}` : id;
}

// ---- schemas -----------------------------------------------------------------------------------------------------

/** An OpenAPI-subset schema (Gemini `Schema`: upper-case types, `nullable`) as JSON Schema. */
export function openApiToJsonSchema(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(openApiToJsonSchema);
  if (!isObject(s)) return s;
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'propertyOrdering' || k === 'nullable') continue;
    if (k === 'type' && typeof v === 'string') out.type = v.toLowerCase();
    else if ((k === 'properties' || k === '$defs' || k === 'definitions') && isObject(v)) out[k] = Object.fromEntries(Object.entries(v).map(([n, x]) => [n, openApiToJsonSchema(x)]));
    else if (k === 'items' || k === 'anyOf' || k === 'oneOf' || k === 'allOf' || k === 'additionalProperties') out[k] = openApiToJsonSchema(v);
    else out[k] = v;
  }
  if (s.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    else return { anyOf: [out, { type: 'null' }] };
  }
  return out;
}

// ---- contents ----------------------------------------------------------------------------------------------------

/** Pairs function calls and responses (ids given or generated), across the whole conversation. */
class CallBook {
  private n = 0;
  private open: Array<{ id: string; name: string }> = [];
  private known = new Set<string>();

  call(id: unknown, name: string): string {
    const callId = typeof id === 'string' && id !== '' ? id : `call_${this.n}`;
    this.n++;
    this.open.push({ id: callId, name });
    this.known.add(callId);
    return callId;
  }

  answer(id: unknown, name: string, where: string): string {
    if (typeof id === 'string' && id !== '' && this.known.has(id)) {
      this.open = this.open.filter((c) => c.id !== id);
      return id;
    }
    const i = this.open.findIndex((c) => c.name === name);
    if (i === -1) throw invalid(`${where}.functionResponse (name "${name}") answers no earlier functionCall of that name`);
    return this.open.splice(i, 1)[0].id;
  }
}

/** Media types carried as IR documents (the rest as images): PDFs and text. */
const isDocumentType = (mime: unknown): boolean => typeof mime === 'string' && (mime.toLowerCase() === 'application/pdf' || mime.toLowerCase().startsWith('text/'));

function mediaPart(p: Json, where: string): IrImage | IrDocument {
  if (isObject(p.inlineData)) {
    const d = p.inlineData;
    if (typeof d.data !== 'string' || typeof d.mimeType !== 'string') throw invalid(`${where}.inlineData needs mimeType and data`);
    if (isDocumentType(d.mimeType)) return { type: 'document', data: d.data, media_type: d.mimeType.toLowerCase() };
    return { type: 'image', data: d.data, media_type: d.mimeType };
  }
  const f = p.fileData as Json;
  if (typeof f.fileUri !== 'string' || f.fileUri === '') throw invalid(`${where}.fileData.fileUri is required`);
  if (isDocumentType(f.mimeType)) return { type: 'document', url: f.fileUri, media_type: (f.mimeType as string).toLowerCase() };
  const img: IrImage = { type: 'image', url: f.fileUri };
  if (typeof f.mimeType === 'string') img.media_type = f.mimeType;
  return img;
}

function resultContent(response: unknown): { content: string; is_error?: boolean } {
  if (!isObject(response)) return { content: response === undefined ? '' : JSON.stringify(response) };
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.error === 'string') return { content: response.error, is_error: true };
  if (keys.length === 1 && (typeof response.output === 'string' || typeof response.content === 'string')) return { content: (response.output ?? response.content) as string };
  return { content: JSON.stringify(response) };
}

function userParts(parts: unknown[], where: string, book: CallBook): IrPart[] {
  const out: IrPart[] = [];
  parts.forEach((p, j) => {
    const w = `${where}.parts[${j}]`;
    if (!isObject(p)) throw invalid(`${w} must be an object`);
    if (typeof p.text === 'string') {
      if (p.thought !== true && p.text !== '') out.push({ type: 'text', text: p.text });
    } else if (isObject(p.inlineData) || isObject(p.fileData)) out.push(mediaPart(p, w));
    else if (isObject(p.functionResponse)) {
      const fr = p.functionResponse;
      if (typeof fr.name !== 'string' || fr.name === '') throw invalid(`${w}.functionResponse.name is required`);
      const id = book.answer(fr.id, fr.name, w);
      out.push({ type: 'tool_result', tool_call_id: id, ...resultContent(fr.response) });
    } else if (isObject(p.functionCall)) throw invalid(`${w}: functionCall parts belong in model contents`);
    else throw invalid(`${w}: part kind ${JSON.stringify(Object.keys(p).join(', '))} is not supported (text, inlineData, fileData, functionResponse)`);
  });
  return out;
}

function signatureOf(p: Json): string | undefined {
  return typeof p.thoughtSignature === 'string' && p.thoughtSignature !== '' ? p.thoughtSignature : undefined;
}

/**
 * A signature a Gemini client sent back, with its origin: Anthropic's when the gateway tagged it so (gemini-output.ts),
 * else Google's. Upstream adapters send only their own protocol's (another's would be refused).
 */
function signed(sig: string): { signature: string; origin: string } {
  return sig.startsWith(ANTHROPIC_SIGNATURE_PREFIX) ? { signature: sig.slice(ANTHROPIC_SIGNATURE_PREFIX.length), origin: 'anthropic' } : { signature: sig, origin: 'google' };
}

function modelParts(parts: unknown[], where: string, book: CallBook): IrPart[] {
  const out: IrPart[] = [];
  let thought: { type: 'reasoning'; text: string; signature?: string; origin?: string } | null = null;
  parts.forEach((p, j) => {
    const w = `${where}.parts[${j}]`;
    if (!isObject(p)) throw invalid(`${w} must be an object`);
    const sig = signatureOf(p);
    if (p.thought === true) {
      if (sig?.startsWith(REDACTED_PREFIX)) {
        thought = null;
        out.push({ type: 'redacted_reasoning', data: sig.slice(REDACTED_PREFIX.length) });
        return;
      }
      const text = typeof p.text === 'string' ? p.text : '';
      if (text === '' && !sig) return;
      if (!thought) out.push((thought = { type: 'reasoning', text: '' }));
      thought.text += text;
      if (sig) {
        Object.assign(thought, signed(sig));
        thought = null;
      }
      return;
    }
    thought = null;
    if (sig) out.push({ type: 'reasoning', text: '', ...signed(sig) });
    if (isObject(p.functionCall)) {
      const fc = p.functionCall;
      if (typeof fc.name !== 'string' || fc.name === '') throw invalid(`${w}.functionCall.name is required`);
      if (fc.args !== undefined && fc.args !== null && !isObject(fc.args)) throw invalid(`${w}.functionCall.args must be an object`);
      out.push({ type: 'tool_call', id: book.call(fc.id, fc.name), name: fc.name, arguments: JSON.stringify(fc.args ?? {}) });
    } else if (typeof p.text === 'string') {
      const last = out[out.length - 1];
      if (p.text === '') return;
      if (last?.type === 'text' && !sig) last.text += p.text;
      else out.push({ type: 'text', text: p.text });
    } else if (isObject(p.inlineData) || isObject(p.fileData)) out.push(mediaPart(p, w));
    else if (isObject(p.functionResponse)) throw invalid(`${w}: functionResponse parts belong in user contents`);
    else throw invalid(`${w}: part kind ${JSON.stringify(Object.keys(p).join(', '))} is not supported (text, functionCall, inlineData, fileData)`);
  });
  return out;
}

function contents(v: unknown): IrMessage[] {
  if (!Array.isArray(v) || v.length === 0) throw invalid('contents is required and must not be empty');
  const book = new CallBook();
  const out: IrMessage[] = [];
  v.forEach((c, i) => {
    const where = `contents[${i}]`;
    if (!isObject(c)) throw invalid(`${where} must be an object`);
    const role = c.role ?? 'user';
    if (role !== 'user' && role !== 'model' && role !== 'function') throw invalid(`${where}.role must be one of: user, model`);
    if (!Array.isArray(c.parts)) throw invalid(`${where}.parts must be an array`);
    const irRole = role === 'model' ? 'assistant' : 'user';
    const parts = irRole === 'assistant' ? modelParts(c.parts, where, book) : userParts(c.parts, where, book);
    if (parts.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === irRole) last.content.push(...parts);
    else out.push({ role: irRole, content: parts });
  });
  if (out.length === 0) throw invalid('contents has no parts the gateway can send (text, media, function calls or responses)');
  return out;
}

function systemInstruction(v: unknown): IrText[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!isObject(v) || !Array.isArray(v.parts)) throw invalid('systemInstruction must be a content with parts');
  const out: IrText[] = [];
  v.parts.forEach((p, i) => {
    if (!isObject(p) || typeof p.text !== 'string') throw invalid(`systemInstruction.parts[${i}] must be a text part`);
    if (p.text !== '') out.push({ type: 'text', text: p.text });
  });
  return out;
}

// ---- tools -------------------------------------------------------------------------------------------------------

/** Gemini's built-in Google Search tool, under its two spellings: the gateway's web search (a server tool). */
const GOOGLE_SEARCH = new Set(['googleSearch', 'google_search']);

/** A server tool a Gemini request names: the web search for a `googleSearch` tool (its index in `tools`). */
export interface GeminiServerTool {
  index: number;
  type: string;
  parameters: Record<string, unknown>;
  raw: Record<string, unknown>;
}

/** The server tools of a Gemini request (`googleSearch` → `gateway:web_search`), or null when it names none. */
export function geminiServerTools(body: Json): GeminiServerTool[] | null {
  if (!Array.isArray(body.tools)) return null;
  let out: GeminiServerTool[] | null = null;
  body.tools.forEach((t, index) => {
    if (isObject(t) && Object.keys(t).some((k) => GOOGLE_SEARCH.has(k))) (out ??= []).push({ index, type: 'gateway:web_search', parameters: {}, raw: t });
  });
  return out;
}

function tools(v: unknown): IrTool[] | undefined {
  const out: IrTool[] = [];
  const given = forEachObject(v, 'tools', (t, where) => {
    const other = Object.keys(t).filter((k) => k !== 'functionDeclarations' && !GOOGLE_SEARCH.has(k));
    if (other.length > 0) throw invalid(`${where}.${other[0]} is not supported: the gateway serves function declarations and googleSearch only (tools[].functionDeclarations, tools[].googleSearch)`);
    if (t.functionDeclarations === undefined && Object.keys(t).some((k) => GOOGLE_SEARCH.has(k))) return; // the gateway's loop runs it
    if (!Array.isArray(t.functionDeclarations)) throw invalid(`${where}.functionDeclarations must be an array`);
    t.functionDeclarations.forEach((d, j) => {
      const w = `${where}.functionDeclarations[${j}]`;
      if (!isObject(d) || typeof d.name !== 'string' || d.name === '') throw invalid(`${w}.name is required`);
      const schema = isObject(d.parametersJsonSchema) ? d.parametersJsonSchema : isObject(d.parameters) ? (openApiToJsonSchema(d.parameters) as Json) : { type: 'object', properties: {} };
      const tool: IrTool = { name: d.name, parameters: schema };
      if (typeof d.description === 'string' && d.description !== '') tool.description = d.description;
      out.push(tool);
    });
  });
  return given ? out : undefined;
}

function toolChoice(v: unknown, declared: IrTool[] | undefined): { choice?: IrToolChoice; tools?: IrTool[] } {
  if (!isObject(v) || !isObject(v.functionCallingConfig)) return { tools: declared };
  const c = v.functionCallingConfig;
  const names = Array.isArray(c.allowedFunctionNames) ? c.allowedFunctionNames.filter((n): n is string => typeof n === 'string') : [];
  switch (c.mode ?? 'AUTO') {
    case 'AUTO':
    case 'VALIDATED':
    case 'MODE_UNSPECIFIED':
      return { choice: { type: 'auto' }, tools: declared };
    case 'NONE':
      return { choice: { type: 'none' }, tools: declared };
    case 'ANY': {
      if (names.length === 1) return { choice: { type: 'tool', name: names[0] }, tools: declared };
      const narrowed = names.length > 0 ? declared?.filter((t) => names.includes(t.name)) : declared;
      return { choice: { type: 'required' }, tools: narrowed };
    }
    default:
      throw invalid(`toolConfig.functionCallingConfig.mode "${String(c.mode)}" is not supported (AUTO, ANY, NONE, VALIDATED)`);
  }
}

// ---- generation config -------------------------------------------------------------------------------------------

const LEVELS: Record<string, IrReasoningConfig['effort']> = { MINIMAL: 'minimal', LOW: 'low', MEDIUM: 'medium', HIGH: 'high' };

function thinking(v: unknown): IrReasoningConfig | undefined {
  if (!isObject(v)) return undefined;
  const out: IrReasoningConfig = {};
  const budget = num(v.thinkingBudget);
  if (budget === 0) out.effort = 'none';
  else if (budget === -1) out.enabled = true;
  else if (budget !== undefined) Object.assign(out, { enabled: true, max_tokens: budget });
  const level = str(v.thinkingLevel);
  if (level !== undefined && out.effort === undefined) {
    const effort = LEVELS[level.toUpperCase()];
    if (!effort) throw invalid(`generationConfig.thinkingConfig.thinkingLevel "${level}" is not supported (MINIMAL, LOW, MEDIUM, HIGH)`);
    out.effort = effort;
  }
  if (v.includeThoughts === true && out.effort !== 'none') {
    out.summary = 'auto';
    out.enabled ??= true;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function responseFormat(g: Json): IrResponseFormat | undefined {
  const mime = g.responseMimeType;
  const schema = isObject(g.responseJsonSchema) ? g.responseJsonSchema : isObject(g.responseSchema) ? (openApiToJsonSchema(g.responseSchema) as Json) : undefined;
  if (mime === undefined || mime === null || mime === 'text/plain') {
    if (schema) throw invalid('generationConfig.responseSchema needs responseMimeType "application/json"');
    return undefined;
  }
  if (mime !== 'application/json') throw invalid(`generationConfig.responseMimeType "${String(mime)}" is not supported (text/plain, application/json)`);
  return schema ? { type: 'json_schema', name: 'response', schema, strict: true } : { type: 'json_object' };
}

function generationConfig(g: unknown, req: Omit<IrRequest, 'model'>): void {
  if (g === undefined || g === null) return;
  if (!isObject(g)) throw invalid('generationConfig must be an object');
  const count = num(g.candidateCount);
  if (count !== undefined && count !== 1) throw invalid('generationConfig.candidateCount must be 1: the gateway returns one candidate');
  const map: Array<[string, 'temperature' | 'top_p' | 'top_k' | 'max_tokens' | 'seed' | 'presence_penalty' | 'frequency_penalty']> = [
    ['temperature', 'temperature'],
    ['topP', 'top_p'],
    ['topK', 'top_k'],
    ['maxOutputTokens', 'max_tokens'],
    ['seed', 'seed'],
    ['presencePenalty', 'presence_penalty'],
    ['frequencyPenalty', 'frequency_penalty'],
  ];
  for (const [from, to] of map) {
    const v = num(g[from]);
    if (v !== undefined) req[to] = v;
  }
  if (Array.isArray(g.stopSequences) && g.stopSequences.length > 0) req.stop = g.stopSequences.map(String);
  const rf = responseFormat(g);
  if (rf) req.response_format = rf;
  const r = thinking(g.thinkingConfig);
  if (r) req.reasoning = r;
  const modalities = responseModalities(g.responseModalities);
  if (modalities) req.modalities = modalities;
}

/** `responseModalities` with IMAGE asks an image-output model for images (docs/images.md); AUDIO is not served here. */
function responseModalities(v: unknown): Array<'text' | 'image'> | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('generationConfig.responseModalities must be an array (TEXT, IMAGE)');
  const out: Array<'text' | 'image'> = [];
  v.forEach((m, i) => {
    const name = typeof m === 'string' ? m.toUpperCase() : m;
    if (name !== 'TEXT' && name !== 'IMAGE') throw invalid(`generationConfig.responseModalities[${i}] "${String(m)}" is not supported (TEXT, IMAGE; speech has its own API)`);
    const mod = name === 'TEXT' ? 'text' : 'image';
    if (!out.includes(mod)) out.push(mod);
  });
  return out.includes('image') ? out : undefined;
}

/** A Gemini GenerateContentRequest (schema-validated) as an IR request. */
export function geminiToIr(body: Json): Omit<IrRequest, 'model'> {
  if (body.cachedContent !== undefined && body.cachedContent !== null) {
    throw invalid('cachedContent is not supported: a context cache lives on Google’s side; send the whole conversation in contents');
  }
  const req: Omit<IrRequest, 'model'> = { system: systemInstruction(body.systemInstruction), messages: contents(body.contents), stream: body.stream === true };
  const tc = toolChoice(body.toolConfig, tools(body.tools));
  if (tc.tools && tc.tools.length > 0) {
    req.tools = tc.tools;
    if (tc.choice) req.tool_choice = tc.choice;
  }
  generationConfig(body.generationConfig, req);
  if (typeof body.user === 'string' && body.user !== '') req.user = body.user;
  return req;
}

export const geminiInbound: InboundAdapter = {
  api: 'gemini',
  toIr: geminiToIr,
  fromIr: geminiFromIr,
  createStreamEncoder: (meta) => new GeminiStreamEncoder(meta),
  errorBody: geminiErrorBody,
};
