/**
 * The client-facing chat completions API (OpenAI shape, OpenRouter extensions) through the IR: a validated chat body
 * → IR request (here), an IR response → chat completion body, IR stream events → `chat.completion.chunk` SSE
 * (ir-inbound-answer.ts).
 *
 * Mapping choices:
 * - `system` and `developer` messages, wherever they appear, become the IR system parts in order (cache marks kept).
 * - `tool` messages become user `tool_result` parts; consecutive tool messages share one IR user message.
 * - `image_url` parts: `data:` URLs are split into base64 data + media type, other URLs kept as URLs. `file` parts
 *   (PDFs) become documents. Content part types the IR cannot carry (audio) are dropped.
 * - Assistant `reasoning_details` (`reasoning.text` with signature, `reasoning.summary`, `reasoning.encrypted`) become
 *   reasoning / redacted parts; a bare `reasoning` string is used only when there are no details.
 * - Non-function tools (server tools) are left to the gateway and not put in the IR.
 * - In answers, `reasoning` is the concatenated reasoning text (null when none) and `reasoning_details` lists every
 *   reasoning part with its signature, redacted reasoning as `reasoning.encrypted`.
 * - Stream tool-call `index` counts tool calls only (0, 1, …), whatever the IR part indexes are.
 * - The encoder does not mask error messages: the caller passes the message it wants the client to see.
 */
import type {
  IrDocument,
  IrImage,
  IrMessage,
  IrPart,
  IrReasoningConfig,
  IrRequest,
  IrResponseFormat,
  IrText,
  IrTool,
  IrToolCall,
  IrToolChoice,
  IrToolResult,
  CacheControl,
} from '../../core/ir.js';

export { ChatStreamEncoder, chatErrorBody, chatFromIr, chatMessage, chatUsage } from './ir-inbound-answer.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

// ------------------------------------------------------------------------------------------------ chat body → IR

function cacheControl(v: unknown): CacheControl | undefined {
  if (!isObj(v) || v.type !== 'ephemeral') return undefined;
  return v.ttl === '5m' || v.ttl === '1h' ? { type: 'ephemeral', ttl: v.ttl } : { type: 'ephemeral' };
}

function withCache<T extends { cache_control?: CacheControl }>(part: T, raw: Obj): T {
  const cc = cacheControl(raw.cache_control);
  if (cc) part.cache_control = cc;
  return part;
}

/** An image from a URL: `data:<type>;base64,<data>` is split, other URLs are kept. */
export function imageFromUrl(url: string, detail?: unknown): IrImage {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const img: IrImage = m ? { type: 'image', data: m[2], media_type: m[1] } : { type: 'image', url };
  if (detail === 'auto' || detail === 'low' || detail === 'high') img.detail = detail;
  return img;
}

/**
 * A chat `file` part → an IR document: `file_data` as a data URL is split into base64 data + media type (another
 * string is a URL), `file_id` is the upstream's file id; `filename` kept. Null without data or id.
 */
export function documentFromFilePart(p: Obj): IrDocument | null {
  const f = p.file;
  if (!isObj(f)) return null;
  const doc: IrDocument = { type: 'document' };
  const fd = str(f.file_data);
  const m = fd ? /^data:([^;,]+);base64,(.*)$/s.exec(fd) : null;
  if (m) Object.assign(doc, { data: m[2], media_type: m[1].toLowerCase() });
  else if (fd) doc.url = fd;
  else if (str(f.file_id)) doc.file_id = str(f.file_id);
  else return null;
  if (str(f.filename)) doc.filename = str(f.filename);
  return withCache(doc, p);
}

/** Text and image parts of a message `content` (string or array of parts); `file` parts too for a user message. */
function contentParts(c: unknown): Array<IrText | IrImage>;
function contentParts(c: unknown, documents: true): Array<IrText | IrImage | IrDocument>;
function contentParts(c: unknown, documents = false): Array<IrText | IrImage | IrDocument> {
  if (typeof c === 'string') return c === '' ? [] : [{ type: 'text', text: c }];
  if (!Array.isArray(c)) return [];
  const out: Array<IrText | IrImage | IrDocument> = [];
  for (const p of c) {
    if (!isObj(p)) continue;
    if ((p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string') out.push(withCache<IrText>({ type: 'text', text: p.text }, p));
    else if (p.type === 'image_url') {
      const iu = p.image_url;
      const url = typeof iu === 'string' ? iu : isObj(iu) ? str(iu.url) : undefined;
      if (url) out.push(withCache(imageFromUrl(url, isObj(iu) ? iu.detail : undefined), p));
    } else if (p.type === 'file' && documents) {
      const doc = documentFromFilePart(p);
      if (doc) out.push(doc);
    }
  }
  return out;
}

/** Reasoning parts of `reasoning_details` entries. */
export function reasoningParts(details: unknown): IrPart[] {
  if (!Array.isArray(details)) return [];
  const out: IrPart[] = [];
  for (const d of details) {
    if (!isObj(d)) continue;
    if (d.type === 'reasoning.text') {
      const part: IrPart = { type: 'reasoning', text: str(d.text) ?? '' };
      if (typeof d.signature === 'string' && d.signature) part.signature = d.signature;
      out.push(part);
    } else if (d.type === 'reasoning.summary') out.push({ type: 'reasoning', text: str(d.summary) ?? '', summary: true });
    else if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') out.push({ type: 'redacted_reasoning', data: d.data });
  }
  return out;
}

function assistantParts(m: Obj): IrPart[] {
  const out: IrPart[] = reasoningParts(m.reasoning_details);
  if (out.length === 0 && typeof m.reasoning === 'string' && m.reasoning) out.push({ type: 'reasoning', text: m.reasoning });
  if (typeof m.content === 'string') {
    if (m.content) out.push({ type: 'text', text: m.content });
  } else if (Array.isArray(m.content)) {
    for (const p of m.content) {
      if (!isObj(p)) continue;
      if (p.type === 'text' && typeof p.text === 'string') out.push(withCache<IrText>({ type: 'text', text: p.text }, p));
      else if (p.type === 'refusal' && typeof p.refusal === 'string') out.push({ type: 'refusal', text: p.refusal });
    }
  }
  if (typeof m.refusal === 'string' && m.refusal) out.push({ type: 'refusal', text: m.refusal });
  if (Array.isArray(m.tool_calls)) {
    for (const tc of m.tool_calls) {
      if (!isObj(tc)) continue;
      const fn = isObj(tc.function) ? tc.function : {};
      const args = fn.arguments;
      out.push(withCache<IrToolCall>({ type: 'tool_call', id: str(tc.id) ?? '', name: str(fn.name) ?? '', arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) }, tc));
    }
  }
  return out;
}

function toolResult(m: Obj): IrToolResult {
  const c = m.content;
  const part: IrToolResult = { type: 'tool_result', tool_call_id: str(m.tool_call_id) ?? '', content: typeof c === 'string' ? c : '' };
  if (Array.isArray(c)) {
    const parts = contentParts(c);
    // A single text part is the same as a string; its cache mark moves to the tool result.
    if (parts.length === 1 && parts[0].type === 'text') {
      part.content = parts[0].text;
      if (parts[0].cache_control) part.cache_control = parts[0].cache_control;
    } else part.content = parts;
  }
  return part;
}

function responseFormat(v: unknown): IrResponseFormat | undefined {
  if (!isObj(v)) return undefined;
  if (v.type === 'text' || v.type === 'json_object') return { type: v.type };
  if (v.type === 'json_schema') {
    const js = isObj(v.json_schema) ? v.json_schema : {};
    const out: IrResponseFormat = { type: 'json_schema', name: str(js.name) ?? 'response', schema: isObj(js.schema) ? js.schema : {} };
    if (typeof js.strict === 'boolean') out.strict = js.strict;
    if (typeof js.description === 'string') out.description = js.description;
    return out;
  }
  return undefined;
}

function toolChoice(v: unknown): IrToolChoice | undefined {
  if (v === 'none' || v === 'auto' || v === 'required') return { type: v };
  if (isObj(v) && v.type === 'function') {
    const name = isObj(v.function) ? str(v.function.name) : str(v.name);
    if (name) return { type: 'tool', name };
  }
  return undefined;
}

function tools(v: unknown): IrTool[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: IrTool[] = [];
  for (const t of v) {
    if (!isObj(t) || t.type !== 'function' || !isObj(t.function)) continue;
    const f = t.function;
    const name = str(f.name);
    if (!name) continue;
    const tool: IrTool = { name, parameters: isObj(f.parameters) ? f.parameters : { type: 'object', properties: {} } };
    if (typeof f.description === 'string') tool.description = f.description;
    if (typeof f.strict === 'boolean') tool.strict = f.strict;
    out.push(withCache(tool, t));
  }
  return out.length > 0 ? out : undefined;
}

const EFFORTS = new Set(['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none']);

function reasoningConfig(body: Obj): IrReasoningConfig | undefined {
  const r = isObj(body.reasoning) ? body.reasoning : {};
  const out: IrReasoningConfig = {};
  const effort = str(body.reasoning_effort) ?? str(r.effort);
  if (effort && EFFORTS.has(effort)) out.effort = effort as IrReasoningConfig['effort'];
  if (typeof r.max_tokens === 'number') out.max_tokens = r.max_tokens;
  if (typeof r.enabled === 'boolean') out.enabled = r.enabled;
  else if (typeof body.include_reasoning === 'boolean' && body.include_reasoning) out.enabled = true;
  if (r.summary === 'auto' || r.summary === 'concise' || r.summary === 'detailed') out.summary = r.summary;
  if (typeof r.exclude === 'boolean') out.exclude = r.exclude;
  else if (body.include_reasoning === false) out.exclude = true;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A validated chat completions body as an IR request (without `model`). */
export function chatToIr(body: Record<string, unknown>): Omit<IrRequest, 'model'> {
  const system: IrText[] = [];
  const messages: IrMessage[] = [];
  const list = Array.isArray(body.messages) ? body.messages : [];
  for (const m of list) {
    if (!isObj(m)) continue;
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const p of contentParts(m.content)) if (p.type === 'text') system.push(p);
        break;
      case 'user': {
        const msg: IrMessage = { role: 'user', content: contentParts(m.content, true) };
        if (typeof m.name === 'string') msg.name = m.name;
        messages.push(msg);
        break;
      }
      case 'assistant': {
        const msg: IrMessage = { role: 'assistant', content: assistantParts(m) };
        if (typeof m.name === 'string') msg.name = m.name;
        messages.push(msg);
        break;
      }
      case 'tool': {
        const prev = messages[messages.length - 1];
        const part = toolResult(m);
        if (prev && prev.role === 'user' && prev.content.length > 0 && prev.content.every((p) => p.type === 'tool_result')) prev.content.push(part);
        else messages.push({ role: 'user', content: [part] });
        break;
      }
    }
  }
  const out: Omit<IrRequest, 'model'> = { system, messages, stream: body.stream === true };
  const t = tools(body.tools);
  if (t) out.tools = t;
  const tc = toolChoice(body.tool_choice);
  if (tc) out.tool_choice = tc;
  if (typeof body.parallel_tool_calls === 'boolean') out.parallel_tool_calls = body.parallel_tool_calls;
  const max = num(body.max_completion_tokens) ?? num(body.max_tokens);
  if (max !== undefined) out.max_tokens = max;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    const v = num(body[k]);
    if (v !== undefined) out[k] = v;
  }
  if (typeof body.stop === 'string') out.stop = [body.stop];
  else if (Array.isArray(body.stop)) out.stop = body.stop.filter((s): s is string => typeof s === 'string');
  const rf = responseFormat(body.response_format);
  if (rf) out.response_format = rf;
  const rc = reasoningConfig(body);
  if (rc) out.reasoning = rc;
  if (typeof body.user === 'string') out.user = body.user;
  if (Array.isArray(body.modalities)) out.modalities = body.modalities.filter((m): m is 'text' | 'image' => m === 'text' || m === 'image');
  return out;
}
