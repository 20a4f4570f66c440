/**
 * OpenAI Chat Completions wire format: `POST /v1/chat/completions` (JSON and
 * SSE streaming, tool calls, structured output, usage) and `GET /v1/models`,
 * with OpenAI's error envelope `{"error":{"message","type","param","code"}}`.
 *
 * Visible reasoning: when the request sets `reasoning_effort` (other than `none`), the answer carries reasoning text
 * the way OpenAI-compatible reasoning servers return it, `reasoning_content` beside `content` (message and stream
 * deltas; https://api-docs.deepseek.com/guides/reasoning_model). It counts as reasoning tokens (the `reasoningTokens`
 * knob, when set, wins), which completion tokens include.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { Endpoint, EndpointContext, ErrorInfo, JsonReply, Protocol, Reply, SseEvent } from './protocol.js';
import { applyStop, partsText, replyPieces, sampleFromSchema, splitFixed, splitWords, tokensOfChars, contentPieces } from './text.js';
import { firstDocumentError, openaiFilePart } from './documents.js';

/** Reasoning pieces when the request asks for reasoning (see the file comment). */
const THOUGHT_PIECES = 6;

const FINGERPRINT = 'fp_sim0000000';
const DEFAULT_MODEL = 'sim-model';
const DEFAULT_COMPLETION_TOKENS = 12;
const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json' };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------- errors

/** Default error details per status, close to what OpenAI sends. */
function defaultError(status: number, model: string): Required<ErrorInfo> {
  switch (status) {
    case 400:
      return {
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in more tokens. " +
          'Please reduce the length of the messages.',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      };
    case 401:
      return { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' };
    case 403:
      return { message: 'You are not allowed to access this resource.', type: 'invalid_request_error', param: null, code: 'permission_denied' };
    case 404:
      return {
        message: `The model \`${model}\` does not exist or you do not have access to it.`,
        type: 'invalid_request_error',
        param: null,
        code: 'model_not_found',
      };
    case 429:
      return {
        message: `Rate limit reached for ${model} on requests per min (RPM). Please try again in 1s.`,
        type: 'requests',
        param: null,
        code: 'rate_limit_exceeded',
      };
    case 500:
      return {
        message: 'The server had an error while processing your request. Sorry about that!',
        type: 'server_error',
        param: null,
        code: null,
      };
    case 503:
      return { message: 'The server is overloaded or not ready yet.', type: 'server_error', param: null, code: 'service_unavailable' };
    case 529:
      return { message: 'The engine is currently overloaded, please try again later.', type: 'server_error', param: null, code: 'overloaded' };
    default:
      return {
        message: `Simulated error (HTTP ${status}).`,
        type: status < 500 ? 'invalid_request_error' : 'server_error',
        param: null,
        code: null,
      };
  }
}

function requestModel(ctx: Partial<EndpointContext>): string {
  const m = isObj(ctx.body) ? ctx.body.model : undefined;
  return ctx.knobs?.model ?? (typeof m === 'string' ? m : DEFAULT_MODEL);
}

export const openaiProtocol: Protocol = {
  name: 'openai',
  error(status, ctx, info) {
    const e = { ...defaultError(status, requestModel(ctx)), ...info };
    const headers: OutgoingHttpHeaders = { 'content-type': 'application/json' };
    const retryAfter = ctx.knobs?.retryAfter;
    if (status === 429 || retryAfter !== undefined) headers['retry-after'] = String(retryAfter ?? 1);
    const body = JSON.stringify({ error: { message: e.message, type: e.type, param: e.param, code: e.code } });
    return { kind: 'json', status, body, headers };
  },
  streamError() {
    const e = defaultError(500, '');
    return { data: JSON.stringify({ error: { message: e.message, type: e.type, param: null, code: null } }) };
  },
};

const invalid = (ctx: EndpointContext, message: string, param: string | null, code: string | null): JsonReply =>
  openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code });

/** Basic request validation, as OpenAI does it. */
function validate(ctx: EndpointContext): JsonReply | undefined {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'The request body must be a JSON object.', null, 'invalid_type');
  if (b.model === undefined) return invalid(ctx, "Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof b.model !== 'string') return invalid(ctx, "Invalid type for 'model': expected a string.", 'model', 'invalid_type');
  if (b.messages === undefined) {
    return invalid(ctx, "Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  }
  if (!Array.isArray(b.messages)) {
    return invalid(ctx, "Invalid type for 'messages': expected an array of objects.", 'messages', 'invalid_type');
  }
  if (b.messages.length === 0) {
    return invalid(
      ctx,
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      'messages',
      'empty_array',
    );
  }
  for (let i = 0; i < b.messages.length; i++) {
    const m: unknown = b.messages[i];
    if (!isObj(m)) return invalid(ctx, `Invalid type for 'messages[${i}]': expected an object.`, `messages[${i}]`, 'invalid_type');
    if (typeof m.role !== 'string') {
      return invalid(ctx, `Missing required parameter: 'messages[${i}].role'.`, `messages[${i}].role`, 'missing_required_parameter');
    }
    const docErr = firstDocumentError([[m.content, `messages[${i}].content`]], openaiFilePart);
    if (docErr) return invalid(ctx, docErr, `messages[${i}].content`, 'invalid_value');
  }
  for (const p of ['max_tokens', 'max_completion_tokens'] as const) {
    const v = b[p];
    if (v !== undefined && v !== null && !(Number.isInteger(v) && (v as number) >= 1)) {
      return invalid(ctx, `Invalid '${p}': expected an integer >= 1.`, p, 'invalid_value');
    }
  }
  const models = ctx.knobs.models;
  if (models !== undefined && !models.includes(b.model)) return openaiProtocol.error(404, ctx);
  return undefined;
}

// ---------------------------------------------------------------- generation

/** prompt_tokens = sum over messages of (ceil(chars/4) + 3), 85 per non-text part, plus the tools' JSON. */
export function promptTokens(body: Obj): number {
  let n = 0;
  for (const m of body.messages as Obj[]) {
    let chars = 0;
    const c = m.content;
    if (typeof c === 'string') chars = c.length;
    else if (Array.isArray(c)) {
      for (const p of c) {
        if (isObj(p) && typeof p.text === 'string') chars += p.text.length;
        else n += 85;
      }
    }
    if (Array.isArray(m.tool_calls)) {
      for (const t of m.tool_calls) {
        const f = isObj(t) && isObj(t.function) ? t.function : undefined;
        if (f) chars += String(f.name ?? '').length + String(f.arguments ?? '').length;
      }
    }
    n += tokensOfChars(chars) + 3;
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) n += tokensOfChars(JSON.stringify(body.tools).length);
  return n;
}

interface ToolPick {
  name: string;
  parameters: unknown;
}

/** The tool to call, or undefined for a text answer. */
function pickTool(body: Obj, toolKnob: boolean | undefined, toolName?: string): ToolPick | undefined {
  if (!Array.isArray(body.tools) || toolKnob === false) return undefined;
  const choice = body.tool_choice;
  if (choice === 'none') return undefined;
  const fns: ToolPick[] = [];
  for (const t of body.tools) {
    const f = isObj(t) && isObj(t.function) ? t.function : undefined;
    if (f && typeof f.name === 'string') fns.push({ name: f.name, parameters: f.parameters });
  }
  if (fns.length === 0) return undefined;
  const named = isObj(choice) && isObj(choice.function) ? choice.function.name : undefined;
  const forced = named !== undefined || choice === 'required';
  const messages = body.messages as Obj[];
  const afterTool = lastTurn(messages).role === 'tool';
  if (!(toolKnob ?? (forced || !afterTool))) return undefined;
  return fns.find((f) => f.name === named) ?? fns.find((f) => f.name === toolName) ?? fns[0];
}

/** The last message that is not a system or developer one (instructions added after a tool result answer nothing). */
function lastTurn(messages: Obj[]): Obj {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role !== 'system' && messages[i].role !== 'developer') return messages[i];
  return messages[messages.length - 1];
}

function lastText(messages: Obj[], role: string): string {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === role) return partsText(messages[i].content);
  return '';
}

interface Generation {
  /** Text pieces, or argument pieces of the tool call. */
  pieces: string[];
  tool?: { id: string; name: string };
  finish: 'stop' | 'length' | 'tool_calls';
  /** Content chunks when streamed (one token each). */
  chunks: number;
  /** Visible reasoning pieces (`reasoning_content`), streamed before the answer. */
  thoughts: string[];
  /** reasoning_tokens (included in completion_tokens). */
  reasoningTokens: number;
}

function generate(ctx: EndpointContext, body: Obj): Generation {
  const k = ctx.knobs;
  const messages = body.messages as Obj[];
  const maxRaw = body.max_completion_tokens ?? body.max_tokens;
  const max = typeof maxRaw === 'number' ? maxRaw : Infinity;
  const afterTool = lastTurn(messages).role === 'tool';
  const seed = afterTool ? partsText(lastTurn(messages).content) : lastText(messages, 'user');
  const effort = body.reasoning_effort;
  const thoughts = typeof effort === 'string' && effort !== 'none' ? replyPieces('Let me think about:', seed, THOUGHT_PIECES) : [];
  const reasoning = k.reasoningTokens ?? thoughts.length;

  const tool = k.content === undefined ? pickTool(body, k.toolCall, k.toolName) : undefined;
  if (tool) {
    const args = sampleFromSchema(tool.parameters ?? { type: 'object' });
    // A `url` argument is the first URL of the conversation's last text, when it has one (e.g. for a fetch tool).
    const url = /https?:\/\/[^\s"'<>]+/.exec(seed)?.[0];
    if (url && isObj(args) && typeof args.url === 'string') args.url = url;
    let pieces = splitFixed(JSON.stringify(args));
    const budget = Math.max(0, max - reasoning - 1); // the header chunk counts as one token
    const truncated = pieces.length > budget;
    if (truncated) pieces = pieces.slice(0, budget);
    return {
      pieces,
      tool: { id: `call_sim${ctx.rid}`, name: tool.name },
      finish: truncated ? 'length' : 'tool_calls',
      chunks: pieces.length + 1,
      thoughts,
      reasoningTokens: reasoning,
    };
  }

  let pieces: string[];
  const rf = isObj(body.response_format) ? body.response_format : undefined;
  if (k.content !== undefined) pieces = contentPieces(k.content, k.chunkChars);
  else if (rf?.type === 'json_schema') {
    const js = isObj(rf.json_schema) ? rf.json_schema : {};
    pieces = splitFixed(JSON.stringify(sampleFromSchema(js.schema ?? { type: 'object' })));
  } else {
    const lead = afterTool ? 'Simulated reply using tool result:' : 'Simulated reply to:';
    pieces = replyPieces(lead, seed, k.completionTokens ?? DEFAULT_COMPLETION_TOKENS);
    if (rf?.type === 'json_object') pieces = splitFixed(JSON.stringify({ reply: pieces.join('') }));
  }

  let finish: Generation['finish'] = 'stop';
  const stop = typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : undefined;
  if (stop) pieces = applyStop(pieces, stop.filter((s): s is string => typeof s === 'string')) ?? pieces;
  const budget = Math.max(0, max - reasoning);
  if (pieces.length > budget) {
    pieces = pieces.slice(0, budget);
    finish = 'length';
  }
  return { pieces, finish, chunks: pieces.length, thoughts, reasoningTokens: reasoning };
}

function usageOf(ctx: EndpointContext, body: Obj, gen: Generation): Obj {
  const prompt = promptTokens(body);
  const reasoning = gen.reasoningTokens;
  const completion = gen.chunks + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: Math.min(ctx.knobs.cachedTokens ?? 0, prompt), audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

// ---------------------------------------------------------------- rendering

function completionBody(id: string, created: number, model: string, gen: Generation, usage: Obj): string {
  const message: Obj = gen.tool
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: gen.tool.id, type: 'function', function: { name: gen.tool.name, arguments: gen.pieces.join('') } }],
        refusal: null,
        annotations: [],
      }
    : { role: 'assistant', content: gen.pieces.join(''), refusal: null, annotations: [] };
  if (gen.thoughts.length > 0) message.reasoning_content = gen.thoughts.join('');
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: gen.finish }],
    usage,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  });
}

function streamEvents(id: string, created: number, model: string, gen: Generation, usage: Obj | undefined): SseEvent[] {
  // Chunks share everything but the choice; build them from string templates.
  const head =
    `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},` +
    `"service_tier":"default","system_fingerprint":"${FINGERPRINT}","choices":[`;
  const tail = usage ? '],"usage":null}' : ']}';
  const chunk = (delta: string, finish: string | null = null) =>
    `${head}{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish === null ? 'null' : `"${finish}"`}}${tail}`;

  const events: SseEvent[] = [];
  if (gen.thoughts.length > 0) {
    events.push({ data: chunk('{"role":"assistant","content":null,"reasoning_content":""}') });
    for (const p of gen.thoughts) events.push({ data: chunk(`{"content":null,"reasoning_content":${JSON.stringify(p)}}`), content: true });
  }
  if (gen.tool) {
    const call = `{"index":0,"id":"${gen.tool.id}","type":"function","function":{"name":${JSON.stringify(gen.tool.name)},"arguments":""}}`;
    events.push({ data: chunk(`{"role":"assistant","content":null,"tool_calls":[${call}],"refusal":null}`), content: true });
    for (const p of gen.pieces) {
      events.push({ data: chunk(`{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(p)}}}]}`), content: true });
    }
  } else {
    events.push({ data: chunk('{"role":"assistant","content":"","refusal":null}') });
    for (const p of gen.pieces) events.push({ data: chunk(`{"content":${JSON.stringify(p)}}`), content: true });
  }
  events.push({ data: chunk('{}', gen.finish) });
  if (usage) events.push({ data: `${head}],"usage":${JSON.stringify(usage)}}` });
  events.push({ data: '[DONE]' });
  return events;
}

export function chatCompletions(ctx: EndpointContext): Reply {
  const err = validate(ctx);
  if (err) return err;
  const body = ctx.body as Obj;
  const gen = generate(ctx, body);
  const usage = usageOf(ctx, body, gen);
  const id = `chatcmpl-sim${ctx.rid}`;
  const created = Math.floor(Date.now() / 1000);
  const model = ctx.knobs.model ?? (body.model as string);
  if (body.stream === true) {
    const so = body.stream_options;
    const includeUsage = isObj(so) && so.include_usage === true;
    return { kind: 'sse', events: streamEvents(id, created, model, gen, includeUsage ? usage : undefined) };
  }
  return { kind: 'json', status: 200, body: completionBody(id, created, model, gen, usage), headers: JSON_HEADERS, chunks: gen.chunks + gen.thoughts.length };
}

function listModels(ctx: EndpointContext): Reply {
  const ids = ctx.knobs.models ?? [ctx.knobs.model ?? DEFAULT_MODEL];
  const data = ids.map((id) => ({ id, object: 'model', created: 1700000000, owned_by: 'model-gateway-sim' }));
  return { kind: 'json', status: 200, body: JSON.stringify({ object: 'list', data }), headers: JSON_HEADERS };
}

export const openaiEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/chat/completions', protocol: openaiProtocol, modelCall: true, handle: chatCompletions },
  { method: 'GET', path: '/v1/models', protocol: openaiProtocol, modelCall: false, handle: listModels },
];
