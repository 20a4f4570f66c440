/**
 * The Messages skin's request side (POST /messages): the rules beyond the JSON schema (`messages`, `fallbacks`) and
 * the body → IR translation, with the fields the IR does not carry listed for same-protocol upstreams.
 */
import { isServerToolType } from '../core/server-tools.js';
import { GATEWAY_FIELDS } from '../core/params.js';
import { isGatewaySignature, openReasoning } from '../core/reasoning-signature.js';
import type { IrDocument, IrImage, IrMessage, IrPart, IrReasoningConfig, IrRequest, IrText, IrTool, IrToolChoice } from '../core/ir.js';
import { bool, cacheControl, forEachObject, invalid, isObject, num, str, withCache, type Json } from './common.js';
import { reasoningKey } from './messages-signing.js';
import { lazyConversation } from '../core/lazy-body.js';

// ---- request validation ------------------------------------------------------------------------------------------

/** Maximum number of `fallbacks` entries on /messages. */
export const MAX_MESSAGES_FALLBACKS = 3;

/**
 * Rules of /messages beyond the JSON schema: `messages` must be present and non-empty; `fallbacks` holds at most 3
 * entries of `{model}` only and cannot be combined with `models`. Returns the 400 message, or null when valid.
 */
export function checkMessagesBody(body: Json): string | null {
  // A lazy conversation (core/lazy-body.ts) is a non-empty array: known without reading it.
  if (!lazyConversation(body, 'messages') && (!Array.isArray(body.messages) || body.messages.length === 0)) return 'messages is required and must not be empty';
  return checkMessagesFallbacks(body);
}

/** The `fallbacks` rules alone (also used for preset-merged bodies). Returns the 400 message, or null. */
export function checkMessagesFallbacks(body: Json): string | null {
  const fb = body.fallbacks;
  if (fb === undefined || fb === null) return null;
  if (!Array.isArray(fb)) return 'fallbacks must be an array of {"model": string}';
  if (fb.length > MAX_MESSAGES_FALLBACKS) return `fallbacks must have at most ${MAX_MESSAGES_FALLBACKS} entries`;
  for (let i = 0; i < fb.length; i++) {
    const e = fb[i] as unknown;
    if (!isObject(e) || typeof e.model !== 'string' || e.model.length === 0) return `fallbacks[${i}].model is required`;
    const extra = Object.keys(e).filter((k) => k !== 'model');
    if (extra.length > 0) return `fallbacks[${i}] supports only "model" (per-attempt overrides are not allowed: ${extra.join(', ')})`;
  }
  if (fb.length > 0 && Array.isArray(body.models) && body.models.length > 0) return 'fallbacks cannot be combined with models';
  return null;
}

/** The fallback model ids of a (valid) /messages body, in order: the `models[]` equivalent for routing. */
export function messagesFallbackModels(body: Json): string[] {
  return Array.isArray(body.fallbacks) ? (body.fallbacks as unknown[]).filter(isObject).map((e) => String(e.model)) : [];
}

// ---- body → IR ---------------------------------------------------------------------------------------------------

function textBlock(b: Json, where: string): IrText {
  if (typeof b.text !== 'string') throw invalid(`${where}.text must be a string`);
  return withCache<IrText>({ type: 'text', text: b.text }, cacheControl(b.cache_control, where));
}

function imageBlock(b: Json, where: string, drops?: string[]): IrImage | null {
  const src = b.source;
  if (!isObject(src)) throw invalid(`${where}.source is required`);
  const cc = cacheControl(b.cache_control, where);
  if (src.type === 'base64') {
    if (typeof src.data !== 'string' || typeof src.media_type !== 'string') throw invalid(`${where}.source needs media_type and data`);
    return withCache<IrImage>({ type: 'image', data: src.data, media_type: src.media_type }, cc);
  }
  if (src.type === 'url') {
    if (typeof src.url !== 'string') throw invalid(`${where}.source.url must be a string`);
    return withCache<IrImage>({ type: 'image', url: src.url }, cc);
  }
  // Another source (a Files API `file`): Anthropic's own; it reaches Anthropic upstreams, others go without it.
  if (drops && typeof src.type === 'string') {
    drops.push(`${where} (image source ${src.type})`);
    return null;
  }
  throw invalid(`${where}.source.type "${String(src.type)}" is not supported (use base64 or url)`);
}

/**
 * A `document` block → an IR document: a base64 source (a PDF), a text source (carried as base64 `text/plain`), a
 * URL source; the title as its file name. A Files API `file` source (Anthropic's own id) and a `content` source reach
 * Anthropic upstreams only (the body passes through); other upstreams go without them (listed as dropped).
 */
function documentBlock(b: Json, where: string, drops: string[]): IrDocument | null {
  const src = b.source;
  if (!isObject(src)) throw invalid(`${where}.source is required`);
  const doc: IrDocument = { type: 'document' };
  if (typeof b.title === 'string' && b.title !== '') doc.filename = b.title;
  if (src.type === 'base64') {
    if (typeof src.data !== 'string' || typeof src.media_type !== 'string') throw invalid(`${where}.source needs media_type and data`);
    Object.assign(doc, { data: src.data, media_type: src.media_type });
  } else if (src.type === 'text') {
    if (typeof src.data !== 'string') throw invalid(`${where}.source.data must be a string`);
    Object.assign(doc, { data: Buffer.from(src.data, 'utf8').toString('base64'), media_type: 'text/plain' });
  } else if (src.type === 'url') {
    if (typeof src.url !== 'string') throw invalid(`${where}.source.url must be a string`);
    doc.url = src.url;
  } else if (typeof src.type === 'string') {
    drops.push(`${where} (document source ${src.type})`);
    return null;
  } else throw invalid(`${where}.source.type is required`);
  return withCache(doc, cacheControl(b.cache_control, where));
}

function toolResultContent(c: unknown, where: string, drops: string[]): string | Array<IrText | IrImage> {
  if (c === undefined || c === null) return '';
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) throw invalid(`${where}.content must be a string or an array of blocks`);
  const out: Array<IrText | IrImage> = [];
  c.forEach((b, i) => {
    const w = `${where}.content[${i}]`;
    if (!isObject(b)) throw invalid(`${w} must be an object`);
    if (b.type === 'text') out.push(textBlock(b, w));
    else if (b.type === 'image') {
      const img = imageBlock(b, w, drops);
      if (img) out.push(img);
    } else if (typeof b.type === 'string') drops.push(`${w} (${b.type})`); // documents, search results, tool references
    else throw invalid(`${w}.type is required`);
  });
  return out;
}

function contentBlock(b: unknown, role: 'user' | 'assistant', where: string, drops: string[]): IrPart | null {
  if (!isObject(b)) throw invalid(`${where} must be an object`);
  const cc = () => cacheControl(b.cache_control, where);
  switch (b.type) {
    case 'text':
      return textBlock(b, where);
    case 'image':
      return imageBlock(b, where, drops);
    case 'document':
      return documentBlock(b, where, drops);
    case 'tool_use': {
      if (role !== 'assistant') throw invalid(`${where}: tool_use blocks belong in assistant messages`);
      if (typeof b.id !== 'string' || typeof b.name !== 'string') throw invalid(`${where} needs id and name`);
      return withCache<IrPart>({ type: 'tool_call', id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) }, cc());
    }
    case 'tool_result': {
      if (role !== 'user') throw invalid(`${where}: tool_result blocks belong in user messages`);
      if (typeof b.tool_use_id !== 'string') throw invalid(`${where}.tool_use_id is required`);
      const part: IrPart = { type: 'tool_result', tool_call_id: b.tool_use_id, content: toolResultContent(b.content, where, drops) };
      if (b.is_error === true) part.is_error = true;
      return withCache(part, cc());
    }
    case 'thinking': {
      if (typeof b.thinking !== 'string') throw invalid(`${where}.thinking must be a string`);
      const part: IrPart = { type: 'reasoning', text: b.thinking };
      if (isGatewaySignature(b.signature)) {
        // The gateway signed this thinking: checked, then carried unsigned — or with the other provider's signature it
        // carries, for that provider only (core/reasoning-signature.ts).
        const opened = reasoningKey() ? openReasoning(reasoningKey()!, b.thinking, b.signature) : { valid: false };
        if (!opened.valid) throw invalid(`${where}.signature is not a valid signature of this thinking block`);
        if (opened.carried) Object.assign(part, { signature: opened.carried.signature, origin: opened.carried.origin });
      } else if (typeof b.signature === 'string' && b.signature !== '') part.signature = b.signature;
      return part;
    }
    case 'redacted_thinking':
      if (typeof b.data !== 'string') throw invalid(`${where}.data must be a string`);
      return { type: 'redacted_reasoning', data: b.data };
    default:
      // Another Anthropic block (search_result, server_tool_use, web_search_tool_result, container_upload,
      // …): it reaches Anthropic upstreams in the passed-through body; the IR (other upstreams) goes without it.
      if (typeof b.type !== 'string' || b.type === '') throw invalid(`${where}.type is required`);
      drops.push(`${where} (${b.type})`);
      return null;
  }
}

const ROLES = ['user', 'assistant', 'system'];

function message(m: unknown, i: number, drops: string[]): IrMessage {
  const where = `messages[${i}]`;
  if (!isObject(m) || !ROLES.includes(m.role as string)) throw invalid(`${where}.role must be one of: ${ROLES.join(', ')}`);
  if (m.role === 'system') return { role: 'system', content: system(m.content, `${where}.content`) };
  const role = m.role as 'user' | 'assistant';
  const content: IrPart[] = [];
  if (typeof m.content === 'string') content.push({ type: 'text', text: m.content });
  else if (Array.isArray(m.content)) {
    m.content.forEach((b, j) => {
      const part = contentBlock(b, role, `${where}.content[${j}]`, drops);
      if (part) content.push(part);
    });
  } else throw invalid(`${where}.content must be a string or an array of content blocks`);
  return { role, content };
}

/** `system`, or a system message's `content`: a string or text blocks. */
function system(v: unknown, field = 'system'): IrText[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'string') return v === '' ? [] : [{ type: 'text', text: v }];
  if (!Array.isArray(v)) throw invalid(`${field} must be a string or an array of text blocks`);
  return v.map((b, i) => {
    if (!isObject(b) || b.type !== 'text') throw invalid(`${field}[${i}] must be a text block`);
    return textBlock(b, `${field}[${i}]`);
  });
}

/** Fields of a custom tool the IR carries; others (`defer_loading`, `input_examples`, …) reach Anthropic upstreams only. */
const TOOL_FIELDS = new Set(['type', 'name', 'description', 'input_schema', 'strict', 'cache_control']);

function tools(v: unknown, drops: string[]): IrTool[] | undefined {
  const out: IrTool[] = [];
  const given = forEachObject(v, 'tools', (t, where) => {
    if (isServerToolType(t.type)) return; // server tools stay out of the IR: the gateway's loop runs them (services/server-tools.ts)
    if (t.type !== undefined && t.type !== null && t.type !== 'custom') {
      // Anthropic's own tools (bash_20250124, text_editor_…, web_fetch_…, code_execution_…, memory_…): Anthropic
      // upstreams get them in the passed-through body; the others have no equivalent.
      if (typeof t.type !== 'string') throw invalid(`${where}.type must be a string`);
      drops.push(`${where} (${t.type})`);
      return;
    }
    if (typeof t.name !== 'string' || t.name === '') throw invalid(`${where}.name is required`);
    if (!isObject(t.input_schema)) throw invalid(`${where}.input_schema is required`);
    for (const k of Object.keys(t)) if (!TOOL_FIELDS.has(k)) drops.push(`${where}.${k}`);
    const tool: IrTool = { name: t.name, parameters: t.input_schema };
    if (typeof t.description === 'string') tool.description = t.description;
    if (typeof t.strict === 'boolean') tool.strict = t.strict;
    out.push(withCache(tool, cacheControl(t.cache_control, where)));
  });
  return given ? out : undefined;
}

function toolChoice(v: unknown): { choice?: IrToolChoice; parallel?: boolean } {
  if (v === undefined || v === null) return {};
  if (!isObject(v)) throw invalid('tool_choice must be an object');
  const parallel = v.disable_parallel_tool_use === true ? false : undefined;
  switch (v.type) {
    case 'auto':
      return { choice: { type: 'auto' }, parallel };
    case 'any':
      return { choice: { type: 'required' }, parallel };
    case 'none':
      return { choice: { type: 'none' } };
    case 'tool':
      if (typeof v.name !== 'string' || v.name === '') throw invalid('tool_choice.name is required when type is "tool"');
      return { choice: { type: 'tool', name: v.name }, parallel };
    default:
      throw invalid(`tool_choice.type "${String(v.type)}" is not supported (auto, any, tool, none)`);
  }
}

const EFFORTS = new Set(['max', 'xhigh', 'high', 'medium', 'low', 'minimal', 'none']);

function reasoning(body: Json): IrReasoningConfig | undefined {
  const out: IrReasoningConfig = {};
  const t = body.thinking;
  if (isObject(t)) {
    if (t.type === 'enabled') {
      out.enabled = true;
      const budget = num(t.budget_tokens);
      if (budget !== undefined) out.max_tokens = budget;
    } else if (t.type === 'disabled') {
      out.effort = 'none';
    } else if (t.type === 'adaptive') {
      out.enabled = true;
    } else {
      throw invalid(`thinking.type "${String(t.type)}" is not supported (enabled, disabled, adaptive)`);
    }
  }
  const oc = body.output_config;
  if (isObject(oc) && typeof oc.effort === 'string' && out.effort !== 'none') {
    if (!EFFORTS.has(oc.effort)) throw invalid(`output_config.effort "${oc.effort}" is not supported`);
    out.effort = oc.effort as IrReasoningConfig['effort'];
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

export function toIr(body: Json): Omit<IrRequest, 'model'> {
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid('messages is required and must not be empty');
  const drops: string[] = [];
  const req: Omit<IrRequest, 'model'> = {
    system: system(body.system),
    messages: body.messages.map((m, i) => message(m, i, drops)),
    stream: body.stream === true,
  };
  const t = tools(body.tools, drops);
  if (t) req.tools = t;
  const tc = toolChoice(body.tool_choice);
  if (tc.choice) req.tool_choice = tc.choice;
  const parallel = tc.parallel ?? bool(body.parallel_tool_calls);
  if (parallel !== undefined) req.parallel_tool_calls = parallel;
  const maxTokens = num(body.max_tokens);
  if (maxTokens !== undefined) req.max_tokens = maxTokens;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    const v = num(body[k]);
    if (v !== undefined) req[k] = v;
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) req.stop = body.stop_sequences.map(String);
  const r = reasoning(body);
  if (r) req.reasoning = r;
  const oc = body.output_config;
  if (isObject(oc) && isObject(oc.format)) {
    if (oc.format.type !== 'json_schema' || !isObject(oc.format.schema)) throw invalid('output_config.format must be {"type":"json_schema","schema":{…}}');
    req.response_format = { type: 'json_schema', name: 'output', schema: oc.format.schema, strict: true };
  }
  const md = body.metadata;
  const user = (isObject(md) ? str(md.user_id) : undefined) ?? str(body.user);
  if (user) req.user = user;
  const unknown = [...droppedFields(body), ...drops];
  if (unknown.length > 0) req.dropped_fields = unknown;
  return req;
}

/** Top-level fields the IR carries (besides the gateway's own, core/params.ts). */
const IR_FIELDS = new Set(['messages', 'system', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_tokens', 'temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed', 'stop_sequences', 'thinking', 'output_config', 'metadata', 'user', 'stream', 'fallbacks']);
/** The sub-fields of objects the IR reads part of. */
const IR_SUBFIELDS: Record<string, Set<string>> = {
  metadata: new Set(['user_id']),
  thinking: new Set(['type', 'budget_tokens']),
  output_config: new Set(['effort', 'format']),
};

/**
 * The fields of a Messages body the IR does not carry (`context_management`, `container`, `mcp_servers`,
 * `service_tier`, `thinking.display`, …): never refused, passed through to Anthropic upstreams, dropped for others.
 */
function droppedFields(body: Json): string[] {
  const out: string[] = [];
  for (const k of Object.keys(body)) {
    if (body[k] === undefined || body[k] === null || GATEWAY_FIELDS.has(k)) continue;
    if (!IR_FIELDS.has(k)) out.push(k);
    else if (IR_SUBFIELDS[k] && isObject(body[k])) for (const sub of Object.keys(body[k] as Json)) if (!IR_SUBFIELDS[k].has(sub)) out.push(`${k}.${sub}`);
  }
  return out;
}
