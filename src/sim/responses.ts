/**
 * OpenAI Responses API wire format: `POST /v1/responses` (JSON and typed SSE events), on the same server and knobs
 * as the chat completions simulator, with OpenAI's error envelope.
 *
 * Behaviour (deterministic, see text.ts for the token rules):
 * - `input` (string or items) and `instructions` make the prompt; prompt tokens follow openai.ts (per item
 *   ceil(chars/4) + 3, 85 per image, plus the tools' JSON).
 * - With function tools a `function_call` item is produced (knob `toolCall`, `tool_choice` none/required/named;
 *   automatic: not right after a `function_call_output`), else one `message` with `output_text`. Tools are those of
 *   `tools` and of `additional_tools` input items; a `namespace` tool's tools are callable with their `namespace`, and
 *   a `custom` (free-form) tool is called with a `custom_tool_call` item whose `input` is a string (streamed as
 *   `response.custom_tool_call_input.delta`/`.done`). The `toolName` knob picks a tool by name (or
 *   `<namespace>__<name>`)
 *   (`content` knob, `text.format` json_schema/json_object, or generated words).
 * - A `reasoning` item comes first when `reasoning.effort` (not `none`) or `reasoning.summary` is set, or the
 *   `reasoningTokens` knob is > 0. It has a `summary_text` only when `reasoning.summary` is set, and
 *   `encrypted_content` only when `include` has `reasoning.encrypted_content`.
 * - `max_output_tokens` (minus reasoning tokens) truncates the output: status `incomplete`,
 *   `incomplete_details.reason: "max_output_tokens"`.
 * - Usage: `input_tokens` (+ `cachedTokens` knob in `input_tokens_details.cached_tokens`, `cacheWriteTokens` knob in
 *   `input_tokens_details.cache_write_tokens` when set), `output_tokens` = output
 *   pieces (+1 for a function call) + `reasoningTokens` knob, `output_tokens_details.reasoning_tokens`.
 * - Streaming: response.created, response.in_progress, then per item output_item.added, (content_part /
 *   reasoning_summary_part).added, deltas, *.done events, output_item.done, and response.completed (or
 *   response.incomplete). Every event has `event:` and `sequence_number`; there is no `[DONE]`. Text, argument and
 *   summary deltas (and a function call's `output_item.added`) are content events for pacing and chunk faults.
 * - In-stream error (`errorAfterChunks`): an `error` event `{type:"error", code:"server_error", message, param}`.
 * - OpenAI's hosted `image_generation` tool: an `image_generation_call` item before the message (responses-images.ts).
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Protocol, Reply, SseEvent } from './protocol.js';
import { imageCall, imageEvents, imageItem, imageToolUsage, type ImageCall } from './responses-images.js';
import { leadingWords, partsText, replyPieces, sampleFromSchema, splitFixed, splitWords, tokensOfChars, contentPieces } from './text.js';
import { firstDocumentError, responsesFilePart } from './documents.js';

const DEFAULT_COMPLETION_TOKENS = 12;
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const responsesProtocol: Protocol = {
  name: 'openai-responses',
  error: (status, ctx, info) => openaiProtocol.error(status, ctx, info),
  streamError() {
    const message = 'The server had an error while processing your request. Sorry about that!';
    return { event: 'error', data: JSON.stringify({ type: 'error', code: 'server_error', message, param: null }) };
  },
};

const invalid = (ctx: EndpointContext, message: string, param: string | null, code: string | null): JsonReply =>
  responsesProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code });

function validate(ctx: EndpointContext): JsonReply | undefined {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'The request body must be a JSON object.', null, 'invalid_type');
  if (b.model === undefined) return invalid(ctx, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof b.model !== 'string') return invalid(ctx, "Invalid type for 'model': expected a string.", 'model', 'invalid_type');
  if (b.input === undefined) return invalid(ctx, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (typeof b.input !== 'string' && !Array.isArray(b.input)) {
    return invalid(ctx, "Invalid type for 'input': expected a string or an array of input items.", 'input', 'invalid_type');
  }
  if (Array.isArray(b.input)) {
    for (let i = 0; i < b.input.length; i++) {
      if (!isObj(b.input[i])) return invalid(ctx, `Invalid type for 'input[${i}]': expected an object.`, `input[${i}]`, 'invalid_type');
    }
    const docErr = firstDocumentError(b.input.map((m: Obj, i): [unknown, string] => [m.content, `input[${i}].content`]), responsesFilePart);
    if (docErr) return invalid(ctx, docErr, 'input', 'invalid_value');
  }
  const v = b.max_output_tokens;
  if (v !== undefined && v !== null && !(Number.isInteger(v) && (v as number) >= 1)) {
    return invalid(ctx, "Invalid 'max_output_tokens': expected an integer >= 1.", 'max_output_tokens', 'invalid_value');
  }
  const models = ctx.knobs.models;
  if (models !== undefined && !models.includes(b.model)) return responsesProtocol.error(404, ctx);
  return undefined;
}

// ---------------------------------------------------------------- prompt

/** Input items (a string input is one user message). */
function inputItems(body: Obj): Obj[] {
  return typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input as Obj[]);
}

/** prompt tokens: per item ceil(chars/4) + 3 (instructions count as one), 85 per image, plus the tools' JSON. */
export function responsesPromptTokens(body: Obj): number {
  let n = typeof body.instructions === 'string' && body.instructions ? tokensOfChars(body.instructions.length) + 3 : 0;
  for (const it of inputItems(body)) {
    let chars = 0;
    const add = (c: unknown) => {
      if (typeof c === 'string') chars += c.length;
      else if (Array.isArray(c)) {
        for (const p of c) {
          if (isObj(p) && typeof p.text === 'string') chars += p.text.length;
          else n += 85;
        }
      }
    };
    if (it.type === 'function_call') chars += String(it.name ?? '').length + String(it.arguments ?? '').length;
    else if (it.type === 'function_call_output') add(it.output);
    else if (it.type === 'reasoning') {
      if (Array.isArray(it.summary)) for (const s of it.summary) if (isObj(s) && typeof s.text === 'string') chars += s.text.length;
    } else add(it.content);
    n += tokensOfChars(chars) + 3;
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) n += tokensOfChars(JSON.stringify(body.tools).length);
  return n;
}

// ---------------------------------------------------------------- generation

/** The last input item that is not a system or developer message (instructions answer nothing). */
function lastTurn(items: Obj[]): Obj | undefined {
  for (let i = items.length - 1; i >= 0; i--) if (items[i].role !== 'system' && items[i].role !== 'developer') return items[i];
  return items[items.length - 1];
}

const isToolOutput = (it: Obj | undefined): boolean => it?.type === 'function_call_output' || it?.type === 'custom_tool_call_output';

interface ToolPick {
  name: string;
  parameters: unknown;
  /** A free-form (`custom`) tool: called with an `input` string. */
  custom: boolean;
  namespace?: string;
}

/** The callable tools of a request: its `tools` and those of its `additional_tools` input items, namespaces opened. */
function callableTools(body: Obj, items: Obj[]): ToolPick[] {
  const out: ToolPick[] = [];
  const add = (t: unknown, namespace?: string): void => {
    if (!isObj(t) || typeof t.name !== 'string') return;
    if (t.type === 'function') out.push({ name: t.name, parameters: t.parameters, custom: false, namespace });
    else if (t.type === 'custom') out.push({ name: t.name, parameters: undefined, custom: true, namespace });
    else if (t.type === 'namespace' && namespace === undefined && Array.isArray(t.tools)) for (const inner of t.tools) add(inner, t.name);
  };
  if (Array.isArray(body.tools)) for (const t of body.tools) add(t);
  for (const it of items) if (it.type === 'additional_tools' && Array.isArray(it.tools)) for (const t of it.tools) add(t);
  return out;
}

function pickTool(body: Obj, items: Obj[], toolKnob: boolean | undefined, toolName?: string): ToolPick | undefined {
  if (toolKnob === false) return undefined;
  const choice = body.tool_choice;
  if (choice === 'none') return undefined;
  const fns = callableTools(body, items);
  if (fns.length === 0) return undefined;
  const named = isObj(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined;
  const forced = named !== undefined || choice === 'required';
  const afterTool = isToolOutput(lastTurn(items));
  if (!(toolKnob ?? (forced || !afterTool))) return undefined;
  const byKnob = (f: ToolPick): boolean => f.name === toolName || (f.namespace !== undefined && `${f.namespace}__${f.name}` === toolName);
  return fns.find((f) => f.name === named) ?? fns.find(byKnob) ?? fns[0];
}

interface Generation {
  /** Text pieces, or argument pieces of the function call. */
  pieces: string[];
  tool?: { callId: string; name: string; custom: boolean; namespace?: string };
  /** Reasoning item (summary pieces empty when no summary was asked for). */
  reasoning?: { summary: string[]; encrypted: string | null };
  truncated: boolean;
  /** Content events when streamed. */
  chunks: number;
  reasoningTokens: number;
  /** The last user text (or tool result) the reply answers. */
  seed: string;
  /** The hosted image tool's call (responses-images.ts), made before the message. */
  image?: ImageCall;
}

function generate(ctx: EndpointContext, body: Obj): Generation {
  const k = ctx.knobs;
  const items = inputItems(body);
  const reasoningTokens = k.reasoningTokens ?? 0;
  const max = typeof body.max_output_tokens === 'number' ? body.max_output_tokens : Infinity;
  const last = lastTurn(items);
  const afterTool = isToolOutput(last);
  let seed = '';
  if (afterTool) seed = partsText(last?.output);
  else {
    const user = [...items].reverse().find((it) => it.role === 'user');
    if (user) seed = partsText(user.content);
  }

  let reasoning: Generation['reasoning'];
  const r = isObj(body.reasoning) ? body.reasoning : undefined;
  const summaryMode = r && (r.summary === 'auto' || r.summary === 'concise' || r.summary === 'detailed');
  if ((r && r.effort !== 'none' && (typeof r.effort === 'string' || summaryMode)) || reasoningTokens > 0) {
    const summary = summaryMode
      ? splitWords(`**Considering the request**\n\nThe user wrote: ${leadingWords(seed, 6).join(' ') || '(nothing)'}. I will answer briefly.`)
      : [];
    const include = Array.isArray(body.include) && body.include.includes('reasoning.encrypted_content');
    reasoning = { summary, encrypted: include ? `gAAAAsim${Buffer.from(`sim-reasoning:${ctx.rid}:${seed.slice(0, 32)}`).toString('base64')}` : null };
  }
  const summaryChunks = reasoning?.summary.length ?? 0;

  const tool = k.content === undefined ? pickTool(body, items, k.toolCall, k.toolName) : undefined;
  if (tool) {
    // A free-form tool's input is plain text (a JavaScript expression, so that a code-running tool accepts it).
    let pieces = splitFixed(tool.custom ? '"simulated input"' : JSON.stringify(sampleFromSchema(tool.parameters ?? { type: 'object' })));
    const budget = Math.max(0, max - reasoningTokens - 1); // the call itself counts as one token
    const truncated = pieces.length > budget;
    if (truncated) pieces = pieces.slice(0, budget);
    return { pieces, tool: { callId: `call_sim${ctx.rid}`, name: tool.name, custom: tool.custom, namespace: tool.namespace }, reasoning, truncated, chunks: summaryChunks + pieces.length + 1, reasoningTokens, seed };
  }

  let pieces: string[];
  const text = isObj(body.text) ? body.text : undefined;
  const format = text && isObj(text.format) ? text.format : undefined;
  if (k.content !== undefined) pieces = contentPieces(k.content, k.chunkChars);
  else if (format?.type === 'json_schema') pieces = splitFixed(JSON.stringify(sampleFromSchema(format.schema ?? { type: 'object' })));
  else {
    const lead = afterTool ? 'Simulated reply using tool result:' : 'Simulated reply to:';
    pieces = replyPieces(lead, seed, k.completionTokens ?? DEFAULT_COMPLETION_TOKENS);
    if (format?.type === 'json_object') pieces = splitFixed(JSON.stringify({ reply: pieces.join('') }));
  }
  const budget = Math.max(0, max - reasoningTokens);
  const truncated = pieces.length > budget;
  if (truncated) pieces = pieces.slice(0, budget);
  return { pieces, reasoning, truncated, chunks: summaryChunks + pieces.length, reasoningTokens, seed };
}

function usageOf(ctx: EndpointContext, body: Obj, gen: Generation): Obj {
  const input = responsesPromptTokens(body);
  const output = gen.pieces.length + (gen.tool ? 1 : 0) + gen.reasoningTokens;
  const cached = Math.min(ctx.knobs.cachedTokens ?? 0, input);
  const details: Obj = { cached_tokens: cached };
  if (ctx.knobs.cacheWriteTokens !== undefined) details.cache_write_tokens = Math.min(ctx.knobs.cacheWriteTokens, input - cached);
  return {
    input_tokens: input,
    input_tokens_details: details,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: gen.reasoningTokens },
    total_tokens: input + output,
  };
}

// ---------------------------------------------------------------- rendering

interface Ids {
  resp: string;
  msg: string;
  rs: string;
  fc: string;
  created: number;
  model: string;
}

function reasoningItem(ids: Ids, gen: Generation): Obj {
  const r = gen.reasoning!;
  const item: Obj = { id: ids.rs, type: 'reasoning', summary: r.summary.length > 0 ? [{ type: 'summary_text', text: r.summary.join('') }] : [] };
  if (r.encrypted !== null) item.encrypted_content = r.encrypted;
  return item;
}

function mainItem(ids: Ids, gen: Generation, status: string): Obj {
  const text = gen.pieces.join('');
  if (gen.tool) {
    const ns = gen.tool.namespace !== undefined ? { namespace: gen.tool.namespace } : {};
    if (gen.tool.custom) return { id: ids.fc, type: 'custom_tool_call', status, call_id: gen.tool.callId, name: gen.tool.name, ...ns, input: text };
    return { id: ids.fc, type: 'function_call', status, arguments: text, call_id: gen.tool.callId, name: gen.tool.name, ...ns };
  }
  return { id: ids.msg, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text }] };
}

function outputItems(ids: Ids, gen: Generation): Obj[] {
  const out: Obj[] = [];
  if (gen.reasoning) out.push(reasoningItem(ids, gen));
  if (gen.image) out.push(imageItem(gen.image, 'completed', true));
  out.push(mainItem(ids, gen, gen.truncated ? 'incomplete' : 'completed'));
  return out;
}

function responseObject(ids: Ids, body: Obj, status: string, output: Obj[], usage: Obj | null): Obj {
  const r = isObj(body.reasoning) ? body.reasoning : {};
  const text = isObj(body.text) ? body.text : {};
  return {
    id: ids.resp,
    object: 'response',
    created_at: ids.created,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: typeof body.max_output_tokens === 'number' ? body.max_output_tokens : null,
    max_tool_calls: null,
    model: ids.model,
    output,
    parallel_tool_calls: typeof body.parallel_tool_calls === 'boolean' ? body.parallel_tool_calls : true,
    previous_response_id: null,
    reasoning: { effort: r.effort ?? null, summary: r.summary ?? null },
    service_tier: 'default',
    store: typeof body.store === 'boolean' ? body.store : true,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    text: { format: isObj(text.format) ? text.format : { type: 'text' }, verbosity: 'medium' },
    tool_choice: body.tool_choice ?? 'auto',
    tools: Array.isArray(body.tools) ? body.tools : [],
    top_p: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: 'disabled',
    usage,
    user: typeof body.user === 'string' ? body.user : null,
    metadata: isObj(body.metadata) ? body.metadata : {},
  };
}

/** A response whose model called the image tool reports the tool's tokens in `tool_usage`. */
const withToolUsage = (resp: Obj, gen: Generation): Obj => (gen.image ? { ...resp, tool_usage: imageToolUsage(gen.image) } : resp);

function streamEvents(ids: Ids, body: Obj, gen: Generation, usage: Obj): SseEvent[] {
  const events: SseEvent[] = [];
  let seq = 0;
  const push = (type: string, fields: Obj, content = false) => {
    const ev: SseEvent = { event: type, data: JSON.stringify({ type, sequence_number: seq++, ...fields }) };
    if (content) ev.content = true;
    events.push(ev);
  };
  push('response.created', { response: responseObject(ids, body, 'in_progress', [], null) });
  push('response.in_progress', { response: responseObject(ids, body, 'in_progress', [], null) });
  let oi = 0;
  if (gen.reasoning) {
    const item = reasoningItem(ids, gen);
    push('response.output_item.added', { output_index: oi, item: { id: ids.rs, type: 'reasoning', summary: [] } });
    if (gen.reasoning.summary.length > 0) {
      const text = gen.reasoning.summary.join('');
      const base = { item_id: ids.rs, output_index: oi, summary_index: 0 };
      push('response.reasoning_summary_part.added', { ...base, part: { type: 'summary_text', text: '' } });
      for (const d of gen.reasoning.summary) push('response.reasoning_summary_text.delta', { ...base, delta: d }, true);
      push('response.reasoning_summary_text.done', { ...base, text });
      push('response.reasoning_summary_part.done', { ...base, part: { type: 'summary_text', text } });
    }
    push('response.output_item.done', { output_index: oi, item });
    oi++;
  }
  if (gen.image) imageEvents(gen.image, oi++, push);
  const status = gen.truncated ? 'incomplete' : 'completed';
  const final = mainItem(ids, gen, status);
  if (gen.tool?.custom) {
    push('response.output_item.added', { output_index: oi, item: { ...final, status: 'in_progress', input: '' } }, true);
    for (const p of gen.pieces) push('response.custom_tool_call_input.delta', { item_id: ids.fc, output_index: oi, delta: p }, true);
    push('response.custom_tool_call_input.done', { item_id: ids.fc, output_index: oi, input: final.input });
  } else if (gen.tool) {
    push('response.output_item.added', { output_index: oi, item: { ...final, status: 'in_progress', arguments: '' } }, true);
    for (const p of gen.pieces) push('response.function_call_arguments.delta', { item_id: ids.fc, output_index: oi, delta: p }, true);
    push('response.function_call_arguments.done', { item_id: ids.fc, output_index: oi, name: gen.tool.name, arguments: final.arguments });
  } else {
    const text = gen.pieces.join('');
    const base = { item_id: ids.msg, output_index: oi, content_index: 0 };
    push('response.output_item.added', { output_index: oi, item: { id: ids.msg, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    push('response.content_part.added', { ...base, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
    for (const p of gen.pieces) push('response.output_text.delta', { ...base, delta: p, logprobs: [] }, true);
    push('response.output_text.done', { ...base, text, logprobs: [] });
    push('response.content_part.done', { ...base, part: { type: 'output_text', annotations: [], logprobs: [], text } });
  }
  push('response.output_item.done', { output_index: oi, item: final });
  push(gen.truncated ? 'response.incomplete' : 'response.completed', { response: withToolUsage(responseObject(ids, body, status, outputItems(ids, gen), usage), gen) });
  return events;
}

export function createResponse(ctx: EndpointContext): Reply {
  const err = validate(ctx);
  if (err) return err;
  const body = ctx.body as Obj;
  const gen = generate(ctx, body);
  if (!gen.tool) gen.image = imageCall(body, ctx.rid, gen.seed) ?? undefined;
  const usage = usageOf(ctx, body, gen);
  const ids: Ids = {
    resp: `resp_sim${ctx.rid}`,
    msg: `msg_sim${ctx.rid}`,
    rs: `rs_sim${ctx.rid}`,
    fc: `fc_sim${ctx.rid}`,
    created: Math.floor(Date.now() / 1000),
    model: ctx.knobs.model ?? (body.model as string),
  };
  if (body.stream === true) return { kind: 'sse', events: streamEvents(ids, body, gen, usage) };
  const resp = withToolUsage(responseObject(ids, body, gen.truncated ? 'incomplete' : 'completed', outputItems(ids, gen), usage), gen);
  return { kind: 'json', status: 200, body: JSON.stringify(resp), headers: JSON_HEADERS, chunks: gen.chunks };
}

/** Fields `/v1/responses/input_tokens` takes; any other is refused, as OpenAI does. */
const COUNT_FIELDS = new Set(['model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'reasoning', 'text', 'truncation', 'conversation', 'previous_response_id']);

/** `POST /v1/responses/input_tokens`: the input tokens the same `/v1/responses` request would report. */
function inputTokens(ctx: EndpointContext): Reply {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'The request body must be a JSON object.', null, 'invalid_type');
  const unknown = Object.keys(b).find((k) => !COUNT_FIELDS.has(k));
  if (unknown) return invalid(ctx, `Unknown parameter: '${unknown}'.`, unknown, 'unknown_parameter');
  if (typeof b.model !== 'string') return invalid(ctx, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (b.input === undefined) return invalid(ctx, "Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  return { kind: 'json', status: 200, body: JSON.stringify({ object: 'response.input_tokens', input_tokens: responsesPromptTokens(b) }), headers: JSON_HEADERS, chunks: 1 };
}

export const responsesEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/responses', protocol: responsesProtocol, modelCall: true, handle: createResponse },
  { method: 'POST', path: '/v1/responses/input_tokens', protocol: responsesProtocol, modelCall: true, handle: inputTokens },
];
