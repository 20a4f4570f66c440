/**
 * The Anthropic Messages skin (POST /messages): request body → IR, IR answer → Message object, IR stream events →
 * Anthropic SSE (`message_start`, `content_block_start|delta|stop`, `message_delta`, `message_stop`), and the
 * Anthropic error envelope `{type:'error', error:{type, message, error_type}, request_id}`.
 *
 * Usage in the answer follows Anthropic's convention: `input_tokens` EXCLUDES cache reads and writes (the IR counts
 * them in), which are reported in `cache_read_input_tokens` / `cache_creation_input_tokens`.
 */
import { isServerToolType } from '../core/server-tools.js';
import { GATEWAY_FIELDS } from '../core/params.js';
import { isGatewaySignature, openReasoning, signReasoning } from '../core/reasoning-signature.js';
import type {
  IrFinishReason,
  IrImage,
  IrMessage,
  IrPart,
  IrReasoningConfig,
  IrRequest,
  IrResponse,
  IrStreamEvent,
  IrText,
  IrTool,
  IrToolChoice,
  IrUsage,
} from '../core/ir.js';
import type { AnswerMeta, InboundAdapter, StreamEncoder } from '../core/adapters.js';
import {
  bool,
  cacheControl,
  defaultErrorType,
  invalid,
  isObject,
  num,
  parseArguments,
  sse,
  str,
  uncachedInput,
  withCache,
  type Json,
} from './common.js';

// ---- reasoning signatures ----------------------------------------------------------------------------------------

/** The key of the gateway's thinking signatures (core/reasoning-signature.ts), set once at start-up. */
let signingKey: Buffer | null = null;

export function useReasoningKey(key: Buffer): void {
  signingKey = key;
}

/** Whether a signature is one Anthropic can verify: Anthropic's own, or of unknown origin (passed as it came). */
const anthropicSigned = (signature: string | undefined, origin: string | undefined): signature is string => !!signature && (origin === undefined || origin === 'anthropic');

/**
 * A thinking block's signature: the upstream's when Anthropic can verify it, else the gateway's own — for thinking no
 * upstream signed and for another provider's signed thinking (a Gemini thoughtSignature), which Claude Code would
 * otherwise send on to Anthropic (empty only before start-up set a key).
 */
function signatureOf(text: string, signature: string | undefined, origin?: string): string {
  if (anthropicSigned(signature, origin)) return signature;
  if (!signingKey) return '';
  // Another provider's signature rides inside the gateway's, for that provider only.
  return signature && origin ? signReasoning(signingKey, text, { origin, signature }) : signReasoning(signingKey, text);
}

// ---- request validation ------------------------------------------------------------------------------------------

/** Maximum number of `fallbacks` entries on /messages. */
export const MAX_MESSAGES_FALLBACKS = 3;

/**
 * Rules of /messages beyond the JSON schema: `messages` must be present and non-empty; `fallbacks` holds at most 3
 * entries of `{model}` only and cannot be combined with `models`. Returns the 400 message, or null when valid.
 */
export function checkMessagesBody(body: Json): string | null {
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages is required and must not be empty';
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
        const opened = signingKey ? openReasoning(signingKey, b.thinking, b.signature) : { valid: false };
        if (!opened.valid) throw invalid(`${where}.signature is not a valid signature of this thinking block`);
        if (opened.carried) Object.assign(part, { signature: opened.carried.signature, origin: opened.carried.origin });
      } else if (typeof b.signature === 'string' && b.signature !== '') part.signature = b.signature;
      return part;
    }
    case 'redacted_thinking':
      if (typeof b.data !== 'string') throw invalid(`${where}.data must be a string`);
      return { type: 'redacted_reasoning', data: b.data };
    default:
      // Another Anthropic block (document, search_result, server_tool_use, web_search_tool_result, container_upload,
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
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw invalid('tools must be an array');
  const out: IrTool[] = [];
  v.forEach((t, i) => {
    const where = `tools[${i}]`;
    if (!isObject(t)) throw invalid(`${where} must be an object`);
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
  return out;
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

function toIr(body: Json): Omit<IrRequest, 'model'> {
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

// ---- IR → Message ------------------------------------------------------------------------------------------------

const ANTHROPIC_STOP_REASONS = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);

/** Anthropic `stop_reason` of an IR finish: the upstream's own value when it is already an Anthropic one. */
export function stopReason(finish: IrFinishReason, native: string | null): string {
  if (native && ANTHROPIC_STOP_REASONS.has(native)) {
    // Keep the native value only when it agrees with the normalized reason (a proxy may relabel, e.g. error).
    const agrees =
      (finish === 'stop' && (native === 'end_turn' || native === 'stop_sequence' || native === 'pause_turn')) ||
      (finish === 'length' && (native === 'max_tokens' || native === 'model_context_window_exceeded')) ||
      (finish === 'tool_calls' && native === 'tool_use') ||
      (finish === 'content_filter' && native === 'refusal');
    if (agrees) return native;
  }
  switch (finish) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic usage object (input excluding cache), with the gateway's cost when known. */
function usageBody(u: IrUsage, meta: AnswerMeta | null, serviceTier: string | null | undefined): Json {
  const out: Json = {
    input_tokens: uncachedInput(u),
    output_tokens: u.output,
    cache_creation_input_tokens: u.cache_write,
    cache_read_input_tokens: u.cache_read,
    cache_creation: null,
    inference_geo: null,
    output_tokens_details: u.reasoning > 0 ? { thinking_tokens: u.reasoning } : null,
    server_tool_use: null,
    service_tier: serviceTier === 'priority' || serviceTier === 'batch' ? serviceTier : 'standard',
  };
  if (meta) {
    out.cost = meta.cost;
    out.cost_details = meta.cost_details;
    if (meta.server_tools) {
      out.server_tool_use = { web_search_requests: meta.server_tools.web_search_requests };
      out.server_tool_use_details = meta.server_tools;
    }
  }
  return out;
}

function contentOut(parts: IrPart[]): Json[] {
  const out: Json[] = [];
  for (const p of parts) {
    switch (p.type) {
      case 'reasoning':
        out.push({ type: 'thinking', thinking: p.text, signature: signatureOf(p.text, p.signature, p.origin) });
        break;
      case 'redacted_reasoning':
        out.push({ type: 'redacted_thinking', data: p.data });
        break;
      case 'text':
        out.push({ type: 'text', text: p.text, citations: null });
        break;
      case 'refusal':
        // Anthropic has no refusal block: the text is the answer and stop_reason says `refusal`.
        out.push({ type: 'text', text: p.text, citations: null });
        break;
      case 'tool_call':
        out.push({ type: 'tool_use', id: p.id, name: p.name, input: parseArguments(p.arguments), caller: { type: 'direct' } });
        break;
      default:
        // Images and tool results are not assistant output in this API.
        break;
    }
  }
  return out;
}

function fromIr(res: IrResponse, meta: AnswerMeta): Json {
  const hasRefusal = res.content.some((p) => p.type === 'refusal');
  const finish = hasRefusal && res.finish_reason === 'stop' ? 'content_filter' : res.finish_reason;
  const body: Json = {
    id: meta.id,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    provider: meta.provider,
    content: contentOut(res.content),
    stop_reason: stopReason(finish, res.native_finish_reason),
    stop_sequence: null,
    stop_details: null,
    container: null,
    usage: usageBody(res.usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 }, meta, res.service_tier),
  };
  if (meta.gateway_metadata) body.gateway_metadata = meta.gateway_metadata;
  return body;
}

// ---- errors ------------------------------------------------------------------------------------------------------

/** Anthropic `error.type` of a gateway status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 408:
      return 'timeout_error';
    case 429:
      return 'rate_limit_error';
    // The reference documents 503 as `overloaded_error` ("Service temporarily overloaded"), like 529.
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * `{type:'error', error:{type, message, error_type}, request_id}`; the rest of the gateway metadata (provider_code,
 * raw, …) goes in the top-level `metadata` the reference allows.
 */
function errorBody(status: number, message: string, metadata: Record<string, unknown> | null, requestId: string | null = null): Json {
  const { error_type: et, ...rest } = metadata ?? {};
  const body: Json = {
    type: 'error',
    error: { type: anthropicErrorType(status), message, error_type: typeof et === 'string' ? et : defaultErrorType(status) },
    request_id: requestId,
  };
  if (Object.keys(rest).length > 0) body.metadata = rest;
  return body;
}

// ---- stream ------------------------------------------------------------------------------------------------------

type BlockKind = 'text' | 'thinking' | 'redacted_thinking' | 'tool_use';

/**
 * IR events → Anthropic SSE. Anthropic blocks are strictly sequential (start, deltas, stop; then the next), and their
 * indexes are positions in the final `content`, so IR part indexes are remapped to 0, 1, 2… in order of appearance.
 * A part that resumes after another started gets a fresh block (text/thinking), except tool arguments and thinking
 * signatures, which go to their original block (a late delta, which the SDKs apply by index) so that the input JSON
 * and the signed thinking stay whole. Upstream decoders normally never interleave, so this is a safety net.
 */
class MessagesStreamEncoder implements StreamEncoder {
  private started = false;
  private done = false;
  private next = 0;
  /** IR index → Anthropic block (current block per IR index). */
  private blocks = new Map<number, { index: number; kind: BlockKind }>();
  private open: { irIndex: number; index: number; kind: BlockKind } | null = null;
  private usage: IrUsage | null = null;
  private finishReason: IrFinishReason | null = null;
  private nativeFinish: string | null = null;
  private sawTool = false;
  private sawRefusal = false;
  /** Thinking blocks (by block index): their text so far, and whether a signature was sent. */
  private readonly thinking = new Map<number, { text: string; signed: boolean }>();

  constructor(private readonly meta: AnswerMeta) {}

  start(): string {
    // message_start waits for the first event so that it can carry input usage when the upstream sends it first.
    return '';
  }

  private messageStart(): string {
    if (this.started) return '';
    this.started = true;
    const u = this.usage;
    return sse('message_start', {
      type: 'message_start',
      message: {
        id: this.meta.id,
        type: 'message',
        role: 'assistant',
        model: this.meta.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        stop_details: null,
        container: null,
        usage: {
          input_tokens: u ? uncachedInput(u) : 0,
          output_tokens: 0,
          cache_creation_input_tokens: u ? u.cache_write : 0,
          cache_read_input_tokens: u ? u.cache_read : 0,
          cache_creation: null,
          inference_geo: null,
          output_tokens_details: null,
          server_tool_use: null,
          service_tier: 'standard',
        },
      },
    });
  }

  private closeOpen(): string {
    if (!this.open) return '';
    const index = this.open.index;
    let out = '';
    // Thinking no upstream signed leaves with the gateway's signature (a real one arriving later replaces it).
    const thinking = this.thinking.get(index);
    if (thinking && !thinking.signed) {
      thinking.signed = true;
      const signature = signatureOf(thinking.text, undefined);
      if (signature) out += this.delta(index, { type: 'signature_delta', signature });
    }
    this.open = null;
    return out + sse('content_block_stop', { type: 'content_block_stop', index });
  }

  /** Makes sure the IR part `irIndex` has an open block of `kind`; returns the frames needed and the block index. */
  private ensure(irIndex: number, kind: BlockKind, contentBlock: () => Json): { out: string; index: number } {
    if (this.open && this.open.irIndex === irIndex && this.open.kind === kind) return { out: '', index: this.open.index };
    const known = this.blocks.get(irIndex);
    if (known && known.kind === 'tool_use' && kind === 'tool_use') return { out: '', index: known.index }; // late arguments
    let out = this.messageStart() + this.closeOpen();
    const index = this.next++;
    this.blocks.set(irIndex, { index, kind });
    this.open = { irIndex, index, kind };
    out += sse('content_block_start', { type: 'content_block_start', index, content_block: contentBlock() });
    return { out, index };
  }

  private delta(index: number, delta: Json): string {
    return sse('content_block_delta', { type: 'content_block_delta', index, delta });
  }

  event(ev: IrStreamEvent): string {
    if (this.done) return '';
    switch (ev.type) {
      case 'start':
        return '';
      case 'usage':
        this.usage = ev.usage;
        return '';
      case 'text_delta':
      case 'refusal_delta': {
        if (ev.type === 'refusal_delta') this.sawRefusal = true;
        if (ev.text === '') return '';
        const b = this.ensure(ev.index, 'text', () => ({ type: 'text', text: '', citations: null }));
        return b.out + this.delta(b.index, { type: 'text_delta', text: ev.text });
      }
      case 'reasoning_delta': {
        if (ev.text === '') return '';
        const b = this.ensure(ev.index, 'thinking', () => ({ type: 'thinking', thinking: '', signature: '' }));
        const t = this.thinking.get(b.index);
        if (t) t.text += ev.text;
        else this.thinking.set(b.index, { text: ev.text, signed: false });
        return b.out + this.delta(b.index, { type: 'thinking_delta', thinking: ev.text });
      }
      case 'reasoning_signature': {
        // A signature that arrives after its thinking block was closed still belongs to that block. Another provider's
        // (a Gemini thoughtSignature) rides inside the gateway's signature of the block's text (signatureOf).
        const known = this.blocks.get(ev.index);
        if (known?.kind === 'thinking' && this.open?.index !== known.index) {
          return this.delta(known.index, { type: 'signature_delta', signature: signatureOf(this.thinking.get(known.index)?.text ?? '', ev.signature, ev.origin) });
        }
        const b = this.ensure(ev.index, 'thinking', () => ({ type: 'thinking', thinking: '', signature: '' }));
        // The upstream signed this block: no gateway signature when it closes.
        const text = this.thinking.get(b.index)?.text ?? '';
        this.thinking.set(b.index, { text, signed: true });
        return b.out + this.delta(b.index, { type: 'signature_delta', signature: signatureOf(text, ev.signature, ev.origin) });
      }
      case 'redacted_reasoning': {
        // A redacted block carries its data on content_block_start and has no deltas.
        let out = this.messageStart() + this.closeOpen();
        const index = this.next++;
        this.blocks.set(ev.index, { index, kind: 'redacted_thinking' });
        this.open = { irIndex: ev.index, index, kind: 'redacted_thinking' };
        out += sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: ev.data } });
        return out;
      }
      case 'tool_call_start': {
        this.sawTool = true;
        const b = this.ensure(ev.index, 'tool_use', () => ({ type: 'tool_use', id: ev.id, name: ev.name, input: {}, caller: { type: 'direct' } }));
        return b.out;
      }
      case 'tool_call_delta': {
        this.sawTool = true;
        const b = this.ensure(ev.index, 'tool_use', () => ({ type: 'tool_use', id: `toolu_${this.meta.id}_${ev.index}`, name: '', input: {}, caller: { type: 'direct' } }));
        if (ev.arguments === '') return b.out;
        return b.out + this.delta(b.index, { type: 'input_json_delta', partial_json: ev.arguments });
      }
      case 'part_end':
        return this.open && this.open.irIndex === ev.index ? this.closeOpen() : '';
      case 'finish':
        this.finishReason = ev.finish_reason;
        this.nativeFinish = ev.native_finish_reason;
        return this.messageStart() + this.closeOpen();
      case 'image': // generated images are rendered by the chat completions API only (docs/images.md)
        return '';
      case 'error':
        return this.error(ev.status, ev.message, ev.error_type, this.meta);
    }
  }

  finish(usage: IrUsage | null, meta: AnswerMeta): string {
    if (this.done) return '';
    const u = usage ?? this.usage ?? { input: 0, output: 0, cache_read: 0, cache_write: 0, reasoning: 0 };
    let out = this.messageStart() + this.closeOpen();
    this.done = true;
    let finish: IrFinishReason = this.finishReason ?? (this.sawTool ? 'tool_calls' : 'stop');
    if (finish === 'stop' && this.sawRefusal) finish = 'content_filter';
    const usageOut = usageBody(u, meta, null);
    delete usageOut.cache_creation;
    delete usageOut.inference_geo;
    delete usageOut.service_tier;
    out += sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stopReason(finish, this.nativeFinish), stop_sequence: null, stop_details: null, container: null },
      usage: usageOut,
    });
    const stop: Json = { type: 'message_stop' };
    if (meta.gateway_metadata) stop.gateway_metadata = meta.gateway_metadata;
    out += sse('message_stop', stop);
    return out;
  }

  error(status: number, message: string, errorType: string, meta: AnswerMeta): string {
    if (this.done) return '';
    this.done = true;
    const ev: Json = { type: 'error', error: { type: anthropicErrorType(status), message, error_type: errorType || defaultErrorType(status) } };
    if (meta.gateway_metadata) ev.gateway_metadata = meta.gateway_metadata;
    return sse('error', ev);
  }
}

export interface MessagesInboundAdapter extends InboundAdapter {
  /** `requestId` (the generation id, when one was assigned) fills the envelope's `request_id`. */
  errorBody(status: number, message: string, metadata: Record<string, unknown> | null, requestId?: string | null): Record<string, unknown>;
}

export const messagesInbound: MessagesInboundAdapter = {
  api: 'messages',
  toIr,
  fromIr,
  createStreamEncoder: (meta) => new MessagesStreamEncoder(meta),
  errorBody,
};
