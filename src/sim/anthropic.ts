/**
 * Anthropic Messages wire format: `POST /v1/messages` (JSON and SSE streaming with the documented event sequence
 * `message_start`, `content_block_start`, `ping`, `content_block_delta`…, `content_block_stop`, `message_delta`,
 * `message_stop`), tool use (input streamed as `input_json_delta` pieces), extended thinking (`thinking_delta`
 * pieces then a `signature_delta`), structured outputs (`output_config.format`), prompt-cache token counts, and
 * `POST /v1/messages/count_tokens`. Errors use Anthropic's envelope
 * `{"type":"error","error":{"type","message"},"request_id"}`; in-stream errors are `event: error`.
 *
 * Deterministic rules (text.ts): one piece = one token = one content event. `output_tokens` counts thinking, text and
 * tool-input pieces. Prompt tokens: ceil(chars/4) + 3 per message, 85 per image, plus the system text and the tools'
 * JSON; `input_tokens` EXCLUDES the cache counts (knobs `cachedTokens` → cache_read_input_tokens, `cacheWriteTokens`
 * → cache_creation_input_tokens), as Anthropic reports it.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { Endpoint, EndpointContext, Reply, SseEvent } from './protocol.js';
import { applyStop, hash32, replyPieces, sampleFromSchema, splitFixed, splitWords, tokensOfChars, contentPieces } from './text.js';
import { anthropicProtocol, blocksOf, isObj, JSON_HEADERS, validate, type Obj } from './anthropic-errors.js';

export { anthropicProtocol } from './anthropic-errors.js';

const DEFAULT_COMPLETION_TOKENS = 12;
/** Thinking pieces when thinking is enabled and the `reasoningTokens` knob is absent. */
const DEFAULT_THINKING_TOKENS = 8;

// ---------------------------------------------------------------- generation

/** Text of message content (string, or blocks: text, and tool_result contents). */
function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  let s = '';
  for (const p of blocksOf(c)) {
    if (typeof p.text === 'string') s += p.text;
    else if (p.type === 'tool_result') s += contentText(p.content);
  }
  return s;
}

/** Prompt tokens (total, cache included): see the file comment. */
export function promptTokens(body: Obj): number {
  let n = 0;
  const sys = body.system;
  if (typeof sys === 'string') n += tokensOfChars(sys.length);
  else n += tokensOfChars(contentText(sys).length);
  for (const m of body.messages as Obj[]) {
    let chars = 0;
    const c = m.content;
    if (typeof c === 'string') chars = c.length;
    for (const p of blocksOf(c)) {
      if (typeof p.text === 'string') chars += p.text.length;
      else if (p.type === 'tool_result') chars += contentText(p.content).length;
      else if (p.type === 'tool_use') chars += String(p.name ?? '').length + JSON.stringify(p.input ?? {}).length;
      else if (p.type === 'thinking') chars += String(p.thinking ?? '').length;
      else n += 85;
    }
    n += tokensOfChars(chars) + 3;
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) n += tokensOfChars(JSON.stringify(body.tools).length);
  return n;
}

interface ToolPick {
  name: string;
  schema: unknown;
  forced: boolean;
}

function pickTool(body: Obj, toolKnob: boolean | undefined, toolName?: string): ToolPick | undefined {
  if (!Array.isArray(body.tools) || toolKnob === false) return undefined;
  const choice = isObj(body.tool_choice) ? body.tool_choice : {};
  if (choice.type === 'none') return undefined;
  const tools: { name: string; schema: unknown }[] = [];
  for (const t of body.tools) if (isObj(t) && typeof t.name === 'string' && isObj(t.input_schema)) tools.push({ name: t.name, schema: t.input_schema });
  if (tools.length === 0) return undefined;
  const named = choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
  const forced = named !== undefined || choice.type === 'any';
  if (!(toolKnob ?? (forced || !afterToolResult(body)))) return undefined;
  const t = tools.find((x) => x.name === named) ?? tools.find((x) => x.name === toolName) ?? tools[0];
  return { ...t, forced };
}

function afterToolResult(body: Obj): boolean {
  // Trailing system turns (Claude Code's reminders after tool results) do not change what the last turn answered.
  const last = (body.messages as Obj[]).filter((m) => m.role !== 'system').at(-1);
  return last?.role === 'user' && blocksOf(last.content).some((p) => p.type === 'tool_result');
}

function lastUserText(messages: Obj[]): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') return contentText(messages[i].content);
  return '';
}

/** Earliest stop sequence occurring in the text, or null. */
function firstStop(text: string, stops: string[]): string | null {
  let best: string | null = null;
  let at = Infinity;
  for (const s of stops) {
    const i = s === '' ? -1 : text.indexOf(s);
    if (i !== -1 && i < at) {
      at = i;
      best = s;
    }
  }
  return best;
}

type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export interface Generation {
  thinking?: { pieces: string[]; signature: string };
  /** Text pieces (the answer, or a short lead before a tool call). */
  text: string[];
  tool?: { id: string; name: string; pieces: string[] };
  stop: StopReason;
  stopSequence: string | null;
  /** Content pieces (= output tokens = content events when streamed). */
  chunks: number;
}

export function generate(ctx: EndpointContext, body: Obj): Generation {
  const k = ctx.knobs;
  const messages = body.messages as Obj[];
  let budget = body.max_tokens as number;
  const seedText = afterToolResult(body) ? contentText(messages[messages.length - 1].content) : lastUserText(messages);
  const gen: Generation = { text: [], stop: 'end_turn', stopSequence: null, chunks: 0 };

  const th = isObj(body.thinking) ? body.thinking : undefined;
  if (th && (th.type === 'enabled' || th.type === 'adaptive')) {
    const want = k.reasoningTokens ?? DEFAULT_THINKING_TOKENS;
    const cap = typeof th.budget_tokens === 'number' ? th.budget_tokens : Infinity;
    const pieces = replyPieces('Let me think about:', seedText, Math.min(want, cap, budget));
    const signature = Buffer.from(`sim-signature:${ctx.rid}:${hash32(pieces.join(''))}`).toString('base64');
    gen.thinking = { pieces, signature };
    budget -= pieces.length;
  }

  const tool = k.content === undefined ? pickTool(body, k.toolCall, k.toolName) : undefined;
  if (tool) {
    if (!tool.forced) gen.text = splitWords(`I'll use the ${tool.name} tool.`).slice(0, budget);
    budget -= gen.text.length;
    let pieces = splitFixed(JSON.stringify(sampleFromSchema(tool.schema)));
    if (budget <= 0 || pieces.length > budget) {
      pieces = pieces.slice(0, Math.max(0, budget));
      gen.stop = 'max_tokens';
    } else gen.stop = 'tool_use';
    if (budget > 0) gen.tool = { id: `toolu_sim${ctx.rid}`, name: tool.name, pieces };
  } else {
    const oc = isObj(body.output_config) && isObj(body.output_config.format) ? body.output_config.format : undefined;
    let pieces: string[];
    if (k.content !== undefined) pieces = contentPieces(k.content, k.chunkChars);
    else if (oc?.type === 'json_schema') pieces = splitFixed(JSON.stringify(sampleFromSchema(oc.schema ?? { type: 'object' })));
    else {
      const lead = afterToolResult(body) ? 'Simulated reply using tool result:' : 'Simulated reply to:';
      pieces = replyPieces(lead, seedText, k.completionTokens ?? DEFAULT_COMPLETION_TOKENS);
    }
    const stops = Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((s): s is string => typeof s === 'string') : [];
    const hit = firstStop(pieces.join(''), stops);
    if (hit !== null) {
      pieces = applyStop(pieces, [hit]) ?? pieces;
      gen.stop = 'stop_sequence';
      gen.stopSequence = hit;
    }
    if (pieces.length > Math.max(0, budget)) {
      pieces = pieces.slice(0, Math.max(0, budget));
      gen.stop = 'max_tokens';
      gen.stopSequence = null;
    }
    gen.text = pieces;
  }
  gen.chunks = (gen.thinking?.pieces.length ?? 0) + gen.text.length + (gen.tool?.pieces.length ?? 0);
  return gen;
}

export interface Usage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  service_tier: 'standard';
}

export function usageOf(ctx: EndpointContext, body: Obj, gen: Generation): Usage {
  const prompt = promptTokens(body);
  const read = Math.min(ctx.knobs.cachedTokens ?? 0, prompt);
  const write = Math.min(ctx.knobs.cacheWriteTokens ?? 0, prompt - read);
  return {
    input_tokens: prompt - read - write,
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: gen.chunks,
    service_tier: 'standard',
  };
}

// ---------------------------------------------------------------- rendering

function toolInput(pieces: string[]): unknown {
  try {
    return JSON.parse(pieces.join(''));
  } catch {
    return {}; // truncated by max_tokens
  }
}

function messageBody(id: string, model: string, gen: Generation, usage: Usage): string {
  const content: Obj[] = [];
  if (gen.thinking) content.push({ type: 'thinking', thinking: gen.thinking.pieces.join(''), signature: gen.thinking.signature });
  if (gen.text.length > 0) content.push({ type: 'text', text: gen.text.join('') });
  if (gen.tool) content.push({ type: 'tool_use', id: gen.tool.id, name: gen.tool.name, input: toolInput(gen.tool.pieces) });
  return JSON.stringify({
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: gen.stop,
    stop_sequence: gen.stopSequence,
    usage,
  });
}

function streamEvents(id: string, model: string, gen: Generation, usage: Usage): SseEvent[] {
  const events: SseEvent[] = [];
  const ev = (event: string, data: string, content = false) => events.push(content ? { event, data, content } : { event, data });
  const start = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } };
  ev('message_start', JSON.stringify({ type: 'message_start', message: start }));
  let index = 0;
  const delta = (d: string, content = true) => ev('content_block_delta', `{"type":"content_block_delta","index":${index},"delta":${d}}`, content);
  const block = (cb: Obj, body: () => void) => {
    ev('content_block_start', JSON.stringify({ type: 'content_block_start', index, content_block: cb }));
    if (index === 0) ev('ping', '{"type":"ping"}');
    body();
    ev('content_block_stop', `{"type":"content_block_stop","index":${index}}`);
    index++;
  };
  const th = gen.thinking;
  if (th) {
    block({ type: 'thinking', thinking: '', signature: '' }, () => {
      for (const p of th.pieces) delta(`{"type":"thinking_delta","thinking":${JSON.stringify(p)}}`);
      delta(`{"type":"signature_delta","signature":${JSON.stringify(th.signature)}}`, false);
    });
  }
  if (gen.text.length > 0) {
    block({ type: 'text', text: '' }, () => {
      for (const p of gen.text) delta(`{"type":"text_delta","text":${JSON.stringify(p)}}`);
    });
  }
  const tool = gen.tool;
  if (tool) {
    block({ type: 'tool_use', id: tool.id, name: tool.name, input: {} }, () => {
      delta('{"type":"input_json_delta","partial_json":""}', false);
      for (const p of tool.pieces) delta(`{"type":"input_json_delta","partial_json":${JSON.stringify(p)}}`);
    });
  }
  ev(
    'message_delta',
    JSON.stringify({ type: 'message_delta', delta: { stop_reason: gen.stop, stop_sequence: gen.stopSequence }, usage: { output_tokens: usage.output_tokens } }),
  );
  ev('message_stop', '{"type":"message_stop"}');
  return events;
}

export function messages(ctx: EndpointContext): Reply {
  const err = validate(ctx);
  if (err) return err;
  const body = ctx.body as Obj;
  const gen = generate(ctx, body);
  const usage = usageOf(ctx, body, gen);
  const id = `msg_sim${ctx.rid}`;
  const model = ctx.knobs.model ?? (body.model as string);
  const headers: OutgoingHttpHeaders = { 'request-id': `req_sim${ctx.rid}` };
  if (body.stream === true) return { kind: 'sse', events: streamEvents(id, model, gen, usage), headers };
  return { kind: 'json', status: 200, body: messageBody(id, model, gen, usage), headers: { ...JSON_HEADERS, ...headers }, chunks: gen.chunks };
}

function countTokens(ctx: EndpointContext): Reply {
  const err = validate(ctx, true);
  if (err) return err;
  return { kind: 'json', status: 200, body: JSON.stringify({ input_tokens: promptTokens(ctx.body as Obj) }), headers: JSON_HEADERS };
}

export const anthropicEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/messages', protocol: anthropicProtocol, modelCall: true, handle: messages },
  { method: 'POST', path: '/v1/messages/count_tokens', protocol: anthropicProtocol, modelCall: true, handle: countTokens },
];
