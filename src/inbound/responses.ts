/**
 * The OpenAI Responses skin (POST /responses), stateless: request body → IR, IR answer → Response object, IR stream
 * events → the typed Responses SSE (see responses-stream.ts), and the error envelope
 * `{error:{code, message, metadata?}, error_type}`.
 *
 * Stateless means nothing is stored: `store: true`, `previous_response_id`, `background: true`, `conversation` and
 * `item_reference` inputs are refused (400) — the client sends the whole conversation in `input` on every call.
 *
 * Reasoning is returned as reasoning items with `summary_text` (the signature, when the upstream signs its reasoning,
 * rides on the item's `signature`; encrypted/redacted reasoning on `encrypted_content`). Sent back as input, an item
 * with a `signature` is full reasoning again; one without is an OpenAI summary (`summary: true` in the IR).
 */
import { isServerToolType } from '../core/server-tools.js';
import type { IrDocument, IrImage, IrMessage, IrPart, IrReasoningConfig, IrRequest, IrResponse, IrResponseFormat, IrText, IrTool, IrToolChoice } from '../core/ir.js';
import type { AnswerMeta, InboundAdapter, StreamEncoder } from '../core/adapters.js';
import { bool, defaultErrorType, imageFromUrl, invalid, isObject, num, str, type Json } from './common.js';
import { finishStatus, outputItems, responseObject, responsesEcho } from './responses-output.js';
import { ResponsesStreamEncoder } from './responses-stream.js';
import { flatOf, responsesTools, type ResponsesToolMap } from './responses-tools.js';

export { responsesEcho } from './responses-output.js';

// ---- request validation ------------------------------------------------------------------------------------------

/** The 400 message when the body needs server-side state the gateway does not keep, else null. */
export function checkStateless(body: Json): string | null {
  if (body.store === true) return 'store: true is not supported: the gateway is stateless (send store: false or omit it)';
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    return 'previous_response_id is not supported: the gateway is stateless, send the whole conversation in input';
  }
  if (body.background === true) return 'background: true is not supported: the gateway is stateless';
  if (body.conversation !== undefined && body.conversation !== null) return 'conversation is not supported: the gateway is stateless, send the whole conversation in input';
  return null;
}

// ---- body → IR ---------------------------------------------------------------------------------------------------

/** Builds IR messages, merging the items of one assistant turn and consecutive tool outputs. */
class Conversation {
  readonly system: IrText[] = [];
  readonly messages: IrMessage[] = [];

  private last(): IrMessage | undefined {
    return this.messages[this.messages.length - 1];
  }

  /** Assistant items (message, reasoning, function_call) that follow each other form one assistant message. */
  assistant(parts: IrPart[]): void {
    if (parts.length === 0) return;
    const last = this.last();
    if (last?.role === 'assistant') last.content.push(...parts);
    else this.messages.push({ role: 'assistant', content: parts });
  }

  /** A user message always starts a new IR message. */
  user(parts: IrPart[]): void {
    if (parts.length > 0) this.messages.push({ role: 'user', content: parts });
  }

  /** Tool outputs join the preceding user message when it holds only tool results (one result message per turn). */
  toolResult(part: IrPart): void {
    const last = this.last();
    if (last?.role === 'user' && last.content.every((p): boolean => p.type === 'tool_result')) last.content.push(part);
    else this.messages.push({ role: 'user', content: [part] });
  }
}

function imagePart(p: Json, where: string): IrImage {
  if (p.file_id !== undefined && p.file_id !== null) throw invalid(`${where}: file_id images are not supported (stateless gateway); send image_url`);
  if (typeof p.image_url !== 'string' || p.image_url === '') throw invalid(`${where}.image_url is required`);
  const img: IrImage = imageFromUrl(p.image_url);
  if (p.detail === 'low' || p.detail === 'high' || p.detail === 'auto') img.detail = p.detail;
  return img;
}

/**
 * An `input_file` part → an IR document: `file_data` (a data URL: base64 data + media type), `file_id` (the
 * upstream's file id) or `file_url`; `filename` kept.
 */
function filePart(p: Json, where: string): IrDocument {
  const doc: IrDocument = { type: 'document' };
  for (const k of ['file_data', 'file_id', 'file_url', 'filename'] as const) {
    if (p[k] !== undefined && p[k] !== null && typeof p[k] !== 'string') throw invalid(`${where}.${k} must be a string`);
  }
  const m = typeof p.file_data === 'string' ? /^data:([^;,]+);base64,(.*)$/s.exec(p.file_data) : null;
  if (m) Object.assign(doc, { data: m[2], media_type: m[1].toLowerCase() });
  else if (typeof p.file_data === 'string' && p.file_data !== '') throw invalid(`${where}.file_data must be a data URL (data:<type>;base64,…)`);
  else if (typeof p.file_id === 'string' && p.file_id !== '') doc.file_id = p.file_id;
  else if (typeof p.file_url === 'string' && p.file_url !== '') doc.url = p.file_url;
  else throw invalid(`${where}: input_file needs file_data, file_id or file_url`);
  if (typeof p.filename === 'string' && p.filename !== '') doc.filename = p.filename;
  return doc;
}

function userContent(content: unknown, where: string, documents = false): Array<IrText | IrImage | IrDocument> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(`${where}.content must be a string or an array of content parts`);
  return content.map((p, i) => {
    const w = `${where}.content[${i}]`;
    if (!isObject(p)) throw invalid(`${w} must be an object`);
    if (p.type === 'input_text' || p.type === 'text') {
      if (typeof p.text !== 'string') throw invalid(`${w}.text must be a string`);
      return { type: 'text', text: p.text };
    }
    if (p.type === 'input_image') return imagePart(p, w);
    if (p.type === 'input_file' && documents) return filePart(p, w);
    throw invalid(`${w}: content type "${String(p.type)}" is not supported${p.type === 'input_file' ? ' here' : ''}`);
  });
}

function assistantContent(content: unknown, where: string): IrPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw invalid(`${where}.content must be a string or an array of content parts`);
  return content.map((p, i): IrPart => {
    const w = `${where}.content[${i}]`;
    if (!isObject(p)) throw invalid(`${w} must be an object`);
    if (p.type === 'output_text' || p.type === 'input_text' || p.type === 'text') {
      if (typeof p.text !== 'string') throw invalid(`${w}.text must be a string`);
      return { type: 'text', text: p.text };
    }
    if (p.type === 'refusal') {
      if (typeof p.refusal !== 'string') throw invalid(`${w}.refusal must be a string`);
      return { type: 'refusal', text: p.refusal };
    }
    throw invalid(`${w}: content type "${String(p.type)}" is not supported in an assistant message`);
  });
}

function systemContent(content: unknown, where: string): IrText[] {
  const parts = userContent(content, where);
  return parts.map((p, i) => {
    if (p.type !== 'text') throw invalid(`${where}.content[${i}]: system and developer messages take text only`);
    return p;
  });
}

function reasoningItem(item: Json, where: string): IrPart[] {
  const parts: IrPart[] = [];
  const signature = str(item.signature) || undefined;
  const texts = (list: unknown, type: string): string[] =>
    Array.isArray(list) ? list.filter((p): p is Json => isObject(p) && p.type === type && typeof p.text === 'string').map((p) => p.text as string) : [];
  const full = texts(item.content, 'reasoning_text');
  const summary = texts(item.summary, 'summary_text');
  if (full.length > 0) {
    const part: IrPart = { type: 'reasoning', text: full.join('') };
    if (signature) part.signature = signature;
    parts.push(part);
  } else if (signature) {
    // Our own output: full reasoning shown as summary text, signed.
    parts.push({ type: 'reasoning', text: summary.join('\n\n'), signature });
  } else {
    for (const text of summary) parts.push({ type: 'reasoning', text, summary: true });
  }
  if (item.encrypted_content !== undefined && item.encrypted_content !== null) {
    if (typeof item.encrypted_content !== 'string') throw invalid(`${where}.encrypted_content must be a string`);
    parts.push({ type: 'redacted_reasoning', data: item.encrypted_content });
  }
  return parts;
}

function functionOutput(output: unknown, where: string): string | Array<IrText | IrImage> {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return userContent(output, where) as Array<IrText | IrImage>;
  throw invalid(`${where}.output must be a string or an array of content parts`);
}

function inputItems(input: unknown[], conv: Conversation, map: ResponsesToolMap, drops: string[]): void {
  input.forEach((raw, i) => {
    const where = `input[${i}]`;
    if (!isObject(raw)) throw invalid(`${where} must be an object`);
    const type = raw.type ?? (raw.role !== undefined ? 'message' : undefined);
    switch (type) {
      case 'message': {
        switch (raw.role) {
          case 'user':
            conv.user(userContent(raw.content, where, true));
            break;
          case 'assistant':
            conv.assistant(assistantContent(raw.content, where));
            break;
          case 'system':
          case 'developer':
            // The IR has one system prompt: instructions first, then system/developer messages in order.
            conv.system.push(...systemContent(raw.content, where));
            break;
          default:
            throw invalid(`${where}.role must be one of: user, assistant, system, developer`);
        }
        break;
      }
      case 'function_call': {
        if (typeof raw.call_id !== 'string' || typeof raw.name !== 'string') throw invalid(`${where} needs call_id and name`);
        const args = typeof raw.arguments === 'string' ? raw.arguments : JSON.stringify(raw.arguments ?? {});
        conv.assistant([{ type: 'tool_call', id: raw.call_id, name: flatOf(map, raw.name, raw.namespace), arguments: args }]);
        break;
      }
      case 'custom_tool_call': {
        // A free-form tool call: the function with one string argument the upstream saw (responses-tools.ts).
        if (typeof raw.call_id !== 'string' || typeof raw.name !== 'string') throw invalid(`${where} needs call_id and name`);
        if (typeof raw.input !== 'string') throw invalid(`${where}.input must be a string`);
        conv.assistant([{ type: 'tool_call', id: raw.call_id, name: flatOf(map, raw.name, raw.namespace), arguments: JSON.stringify({ input: raw.input }) }]);
        break;
      }
      case 'local_shell_call':
      case 'apply_patch_call': {
        // A call to a client-run tool: the function of the same name the upstream saw (responses-tools.ts).
        const local = type === 'local_shell_call';
        const payload = local ? raw.action : raw.operation;
        if (typeof raw.call_id !== 'string') throw invalid(`${where}.call_id is required`);
        if (!isObject(payload)) throw invalid(`${where}.${local ? 'action' : 'operation'} must be an object`);
        const args = local ? Object.fromEntries(Object.entries(payload).filter(([k]) => k !== 'type')) : payload;
        conv.assistant([{ type: 'tool_call', id: raw.call_id, name: flatOf(map, local ? 'local_shell' : 'apply_patch', undefined), arguments: JSON.stringify(args) }]);
        break;
      }
      case 'local_shell_call_output':
      case 'apply_patch_call_output': {
        if (typeof raw.call_id !== 'string') throw invalid(`${where}.call_id is required`);
        const part: IrPart = { type: 'tool_result', tool_call_id: raw.call_id, content: raw.output === undefined || raw.output === null ? '' : functionOutput(raw.output, where) };
        if (raw.status === 'failed' || raw.status === 'incomplete') part.is_error = true;
        conv.toolResult(part);
        break;
      }
      case 'additional_tools':
        break; // its tools joined the request's (responses-tools.ts)
      case 'custom_tool_call_output':
      case 'function_call_output': {
        if (typeof raw.call_id !== 'string') throw invalid(`${where}.call_id is required`);
        const part: IrPart = { type: 'tool_result', tool_call_id: raw.call_id, content: functionOutput(raw.output, where) };
        if (raw.status === 'incomplete') part.is_error = true;
        conv.toolResult(part);
        break;
      }
      case 'reasoning':
        conv.assistant(reasoningItem(raw, where));
        break;
      case 'item_reference':
        throw invalid(`${where}: item_reference needs stored responses; the gateway is stateless, send the item itself`);
      default:
        // Another Responses item (web_search_call, local_shell_call, compaction, …): it reaches a Responses upstream
        // in the passed-through body; the IR (other upstreams) goes without it.
        if (typeof type !== 'string' || type === '') throw invalid(`${where}.type is required`);
        drops.push(`${where} (${type})`);
    }
  });
}

function toolChoice(v: unknown, map: ResponsesToolMap): IrToolChoice | undefined {
  if (v === undefined || v === null) return undefined;
  if (v === 'auto' || v === 'none' || v === 'required') return { type: v };
  if (isObject(v) && (v.type === 'function' || v.type === 'custom') && typeof v.name === 'string' && v.name !== '') return { type: 'tool', name: flatOf(map, v.name, v.namespace) };
  throw invalid('tool_choice must be "auto", "none", "required" or {"type":"function","name":…}');
}

function responseFormat(text: unknown): IrResponseFormat | undefined {
  if (!isObject(text) || !isObject(text.format)) return undefined;
  const f = text.format;
  switch (f.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      if (typeof f.name !== 'string' || f.name === '') throw invalid('text.format.name is required for json_schema');
      if (!isObject(f.schema)) throw invalid('text.format.schema is required for json_schema');
      const out: IrResponseFormat = { type: 'json_schema', name: f.name, schema: f.schema };
      if (typeof f.strict === 'boolean') out.strict = f.strict;
      if (typeof f.description === 'string') out.description = f.description;
      return out;
    }
    default:
      throw invalid(`text.format.type "${String(f.type)}" is not supported (text, json_object, json_schema)`);
  }
}

function reasoning(v: unknown): IrReasoningConfig | undefined {
  if (!isObject(v)) return undefined;
  const out: IrReasoningConfig = {};
  if (typeof v.effort === 'string') out.effort = v.effort as IrReasoningConfig['effort'];
  if (v.summary === 'auto' || v.summary === 'concise' || v.summary === 'detailed') out.summary = v.summary;
  if (typeof v.enabled === 'boolean') out.enabled = v.enabled;
  const mt = num(v.max_tokens);
  if (mt !== undefined) out.max_tokens = mt;
  if (typeof v.exclude === 'boolean') out.exclude = v.exclude;
  return Object.keys(out).length > 0 ? out : undefined;
}

function toIr(body: Json): Omit<IrRequest, 'model'> {
  const stateless = checkStateless(body);
  if (stateless) throw invalid(stateless);
  if (body.prompt !== undefined && body.prompt !== null) throw invalid('prompt (stored prompt templates) is not supported; send instructions and input');
  const conv = new Conversation();
  const rt = responsesTools(body);
  if (typeof body.instructions === 'string' && body.instructions !== '') conv.system.push({ type: 'text', text: body.instructions });
  if (typeof body.input === 'string') conv.user([{ type: 'text', text: body.input }]);
  else if (Array.isArray(body.input)) inputItems(body.input, conv, rt.map, rt.drops);
  else if (body.input !== undefined && body.input !== null) throw invalid('input must be a string or an array of input items');
  if (conv.messages.length === 0) throw invalid('input is required and must contain at least one message');

  const req: Omit<IrRequest, 'model'> = { system: conv.system, messages: conv.messages, stream: body.stream === true };
  if (rt.tools.length > 0 || Array.isArray(body.tools)) req.tools = rt.tools;
  const tc = toolChoice(body.tool_choice, rt.map);
  if (tc) req.tool_choice = tc;
  const parallel = bool(body.parallel_tool_calls);
  if (parallel !== undefined) req.parallel_tool_calls = parallel;
  const maxTokens = num(body.max_output_tokens);
  if (maxTokens !== undefined) req.max_tokens = maxTokens;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    const v = num(body[k]);
    if (v !== undefined) req[k] = v;
  }
  const rf = responseFormat(body.text);
  if (rf) req.response_format = rf;
  const r = reasoning(body.reasoning);
  if (r) req.reasoning = r;
  const user = str(body.user) || str(body.safety_identifier);
  if (user) req.user = user;
  const modalities = outputModalities(body);
  if (modalities) req.modalities = modalities;
  if (rt.drops.length > 0) req.dropped_fields = rt.drops;
  return req;
}

/**
 * Image output (docs/images.md): `modalities` as the chat API has it, or OpenAI's hosted `image_generation` tool,
 * which through the IR asks an image-output model for images (`image_generation_call` output items).
 */
function outputModalities(body: Json): Array<'text' | 'image'> | undefined {
  if (body.modalities !== undefined && body.modalities !== null) {
    if (!Array.isArray(body.modalities)) throw invalid('modalities must be an array of "text" and "image"');
    const out: Array<'text' | 'image'> = [];
    body.modalities.forEach((m, i) => {
      if (m !== 'text' && m !== 'image') throw invalid(`modalities[${i}] must be "text" or "image"`);
      if (!out.includes(m)) out.push(m);
    });
    return out.length > 0 ? out : undefined;
  }
  if (Array.isArray(body.tools) && body.tools.some((t) => isObject(t) && t.type === 'image_generation')) return ['image', 'text'];
  return undefined;
}

// ---- IR → Response -----------------------------------------------------------------------------------------------

/**
 * The Response object. `request` (the client body) lets the object echo the request's settings (instructions,
 * temperature, tools, …) as OpenAI's does; without it they take their defaults.
 */
function fromIr(res: IrResponse, meta: AnswerMeta, request?: Json): Json {
  const st = finishStatus(res.finish_reason);
  return responseObject({
    meta,
    echo: responsesEcho(request),
    status: st.status,
    output: outputItems(res.content, meta, request ? responsesTools(request).map : null),
    usage: res.usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 },
    incomplete_details: st.incomplete_details,
    error: st.error,
    error_type: st.status === 'failed' ? 'provider_unavailable' : undefined,
    service_tier: res.service_tier ?? null,
  });
}

// ---- errors ------------------------------------------------------------------------------------------------------

/** `{error:{code, message, metadata?}, error_type}`: the gateway envelope plus the skin's top-level `error_type`. */
function errorBody(status: number, message: string, metadata: Record<string, unknown> | null): Json {
  const error: Json = { code: status, message };
  if (metadata && Object.keys(metadata).length > 0) error.metadata = metadata;
  const et = metadata?.error_type;
  return { error, error_type: typeof et === 'string' ? et : defaultErrorType(status) };
}

export interface ResponsesInboundAdapter extends InboundAdapter {
  fromIr(res: IrResponse, meta: AnswerMeta, request?: Record<string, unknown>): Record<string, unknown>;
  createStreamEncoder(meta: AnswerMeta, request?: Record<string, unknown>): StreamEncoder;
}

export const responsesInbound: ResponsesInboundAdapter = {
  api: 'responses',
  toIr,
  fromIr,
  createStreamEncoder: (meta, request) => new ResponsesStreamEncoder(meta, responsesEcho(request), request ? responsesTools(request).map : null),
  errorBody,
};
