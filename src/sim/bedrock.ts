/**
 * Amazon Bedrock runtime, Converse and ConverseStream (https://docs.aws.amazon.com/bedrock/latest/APIReference/):
 *
 *   POST /model/{modelId}/converse          JSON answer
 *   POST /model/{modelId}/converse-stream   AWS event stream (`application/vnd.amazon.eventstream`, binary frames)
 *   POST /model/{modelId}/invoke            InvokeModel, for the embeddings models: Cohere Embed
 *                                           (`{texts, input_type, embedding_types?}`) and Titan Text Embeddings
 *                                           (`{inputText, dimensions?, normalize?}`), vectors from `simEmbedding`;
 *                                           and the image models (Nova Canvas, Titan Image, Stability: bedrock-media.ts)
 *   POST /rerank                            the Agent Runtime's Rerank API (bedrock-media.ts)
 *
 * Every request must be signed with SigV4 for service `bedrock` (checked by sigv4.ts; simulated key pairs
 * `AKIDSIM…` / `simsecret/<id>`) or carry a Bedrock API key as a bearer token. Errors are Bedrock's: the status, an
 * `x-amzn-errortype` header and `{"message"}`; in a stream, `exception` messages. The answer is generated like the
 * Anthropic simulator's (the request is read as the equivalent Messages request): text, tool use, reasoning with a
 * signature (`additionalModelRequestFields.thinking`), structured output (`outputConfig.textFormat`), usage with
 * cache reads/writes (knobs), stop sequences and max tokens. The `models` knob lists the model ids that exist.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { generate, usageOf, type Generation, type Usage } from './anthropic.js';
import type { Endpoint, EndpointContext, JsonReply, Protocol, Reply, SseEvent } from './protocol.js';
import { verifySigV4 } from './sigv4.js';
import { simEmbedding, simEmbeddingTokens } from './embeddings.js';
import { bedrockDocument } from './documents.js';
import { invokeImage, rerank } from './bedrock-media.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const utf8 = new TextDecoder();
const codec = new EventStreamCodec((b) => utf8.decode(b), (s) => new Uint8Array(Buffer.from(s, 'utf8')));

const ERROR_TYPE: Record<number, [string, string]> = {
  400: ['ValidationException', 'Input is too long for requested model.'],
  403: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  404: ['ResourceNotFoundException', 'The requested resource could not be found.'],
  408: ['ModelTimeoutException', 'Model has timed out in processing the request. Try your request again.'],
  424: ['ModelErrorException', 'The system encountered an unexpected error during processing. Try your request again.'],
  429: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  500: ['InternalServerException', 'The system encountered an unexpected error during processing. Try your request again.'],
  503: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
};

export const bedrockProtocol: Protocol = {
  name: 'bedrock',
  error(status, ctx, info) {
    const [type, message] = ERROR_TYPE[status] ?? [status < 500 ? 'ValidationException' : 'InternalServerException', `Simulated error (HTTP ${status}).`];
    const headers: OutgoingHttpHeaders = {
      'content-type': 'application/json',
      'x-amzn-errortype': `${info?.type ?? type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': `sim-${ctx.rid ?? '0'}`,
    };
    if (ctx.knobs?.retryAfter !== undefined) headers['retry-after'] = String(ctx.knobs.retryAfter);
    return { kind: 'json', status, body: JSON.stringify({ message: info?.message ?? message }), headers };
  },
  streamError() {
    return { event: 'exception:modelStreamErrorException', data: JSON.stringify({ message: 'The model stream encountered an error. Try your request again.', originalStatusCode: 500 }) };
  },
};

/** One event-stream message: an event (`:event-type`) or, for `exception:<type>`, an exception. */
export function frameEvent(ev: SseEvent): Uint8Array {
  const name = ev.event ?? 'chunk';
  const exception = name.startsWith('exception:') ? name.slice('exception:'.length) : null;
  const str = (value: string) => ({ type: 'string' as const, value });
  const headers: Record<string, ReturnType<typeof str>> = { ':message-type': str(exception ? 'exception' : 'event'), ':content-type': str('application/json') };
  if (exception) headers[':exception-type'] = str(exception);
  else headers[':event-type'] = str(name);
  return codec.encode({ headers, body: new Uint8Array(Buffer.from(ev.data, 'utf8')) });
}

const invalid = (ctx: EndpointContext, message: string): JsonReply => bedrockProtocol.error(400, ctx, { message, type: 'ValidationException' });

function authenticate(ctx: EndpointContext): JsonReply | undefined {
  const auth = typeof ctx.headers.authorization === 'string' ? ctx.headers.authorization : '';
  if (/^Bearer \S+$/.test(auth)) return undefined; // a Bedrock API key
  const bad = verifySigV4({ method: 'POST', path: ctx.fullPath ?? ctx.path, query: ctx.query, headers: ctx.headers, body: ctx.rawBody ?? '' }, 'bedrock');
  return bad ? bedrockProtocol.error(bad.status, ctx, { type: bad.type, message: bad.message }) : undefined;
}

/** A Converse content block as the Messages block the generator reads. */
function toMessagesBlock(b: Obj): Obj | null {
  if (typeof b.text === 'string') return { type: 'text', text: b.text };
  if (isObj(b.toolUse)) return { type: 'tool_use', id: b.toolUse.toolUseId, name: b.toolUse.name, input: b.toolUse.input };
  if (isObj(b.toolResult)) {
    const content = (Array.isArray(b.toolResult.content) ? b.toolResult.content : []).filter(isObj).map((c) => ({ type: 'text', text: typeof c.text === 'string' ? c.text : JSON.stringify(c.json ?? '') }));
    return { type: 'tool_result', tool_use_id: b.toolResult.toolUseId, content };
  }
  if (isObj(b.image)) return { type: 'image' };
  if (isObj(b.document)) return { type: 'document' };
  if (isObj(b.reasoningContent)) return { type: 'thinking', thinking: isObj(b.reasoningContent.reasoningText) ? String(b.reasoningContent.reasoningText.text ?? '') : '' };
  return null;
}

/** Checks a Converse body as Bedrock does, and reads it as the equivalent Messages body. */
function readConverse(ctx: EndpointContext, modelId: string): Obj | JsonReply {
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'Malformed input request, please reformat your input and try again.');
  if (!Array.isArray(b.messages) || b.messages.length === 0) return invalid(ctx, 'A conversation must start with a user message. Try again with a conversation that starts with a user message.');
  if (ctx.knobs.models && !ctx.knobs.models.includes(modelId)) return bedrockProtocol.error(400, ctx, { type: 'ValidationException', message: 'The provided model identifier is invalid.' });
  const messages: Obj[] = [];
  let prev = '';
  let toolBlocks = false;
  for (const m of b.messages) {
    if (!isObj(m) || (m.role !== 'user' && m.role !== 'assistant') || !Array.isArray(m.content)) return invalid(ctx, 'Malformed input request: messages[].role must be user or assistant, content a list.');
    if (messages.length === 0 && m.role !== 'user') return invalid(ctx, 'A conversation must start with a user message. Try again with a conversation that starts with a user message.');
    if (m.role === prev) return invalid(ctx, 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.');
    prev = m.role;
    const content: Obj[] = [];
    for (const c of m.content) {
      if (!isObj(c)) continue;
      if (typeof c.text === 'string' && c.text.trim() === '') return invalid(ctx, 'The text field in the ContentBlock object is blank. Add text to the text field, and try again.');
      const docErr = bedrockDocument(c);
      if (docErr) return invalid(ctx, docErr);
      if (c.toolUse || c.toolResult) toolBlocks = true;
      const mb = toMessagesBlock(c);
      if (mb) content.push(mb);
    }
    messages.push({ role: m.role, content });
  }
  const tc = isObj(b.toolConfig) ? b.toolConfig : null;
  if (toolBlocks && !tc) return invalid(ctx, 'The toolConfig field must be defined when using toolUse and toolResult content blocks.');
  const inf = isObj(b.inferenceConfig) ? b.inferenceConfig : {};
  const extra = isObj(b.additionalModelRequestFields) ? b.additionalModelRequestFields : {};
  const maxTokens = typeof inf.maxTokens === 'number' ? inf.maxTokens : 4096;
  const th = isObj(extra.thinking) ? extra.thinking : undefined;
  if (th && typeof th.budget_tokens === 'number' && th.budget_tokens >= maxTokens) return invalid(ctx, '`max_tokens` must be greater than `thinking.budget_tokens`.');
  const out: Obj = { model: modelId, max_tokens: maxTokens, messages };
  if (Array.isArray(b.system)) out.system = b.system.filter(isObj).map((s) => ({ type: 'text', text: String(s.text ?? '') }));
  if (Array.isArray(inf.stopSequences)) out.stop_sequences = inf.stopSequences;
  if (th) out.thinking = th;
  if (tc && Array.isArray(tc.tools)) {
    out.tools = tc.tools.filter(isObj).map((t) => (isObj(t.toolSpec) ? { name: t.toolSpec.name, input_schema: isObj(t.toolSpec.inputSchema) ? t.toolSpec.inputSchema.json : {} } : null)).filter(Boolean);
    const ch = isObj(tc.toolChoice) ? tc.toolChoice : {};
    out.tool_choice = ch.any ? { type: 'any' } : isObj(ch.tool) ? { type: 'tool', name: ch.tool.name } : { type: 'auto' };
  }
  const fmt = isObj(b.outputConfig) && isObj(b.outputConfig.textFormat) ? b.outputConfig.textFormat : null;
  if (fmt) {
    const js = isObj(fmt.structure) && isObj(fmt.structure.jsonSchema) ? fmt.structure.jsonSchema : null;
    if (fmt.type !== 'json_schema' || !js || typeof js.schema !== 'string') return invalid(ctx, 'outputConfig.textFormat needs type json_schema and structure.jsonSchema.schema, a JSON string.');
    try {
      out.output_config = { format: { type: 'json_schema', schema: JSON.parse(js.schema) } };
    } catch {
      return invalid(ctx, 'The JSON schema in outputConfig is not valid JSON.');
    }
  }
  return out;
}

function converseUsage(u: Usage): Obj {
  return { inputTokens: u.input_tokens, outputTokens: u.output_tokens, totalTokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens + u.output_tokens, cacheReadInputTokens: u.cache_read_input_tokens, cacheWriteInputTokens: u.cache_creation_input_tokens };
}

function toolInput(pieces: string[]): unknown {
  try {
    return JSON.parse(pieces.join(''));
  } catch {
    return {};
  }
}

function answerBody(gen: Generation, usage: Usage): string {
  const content: Obj[] = [];
  if (gen.thinking) content.push({ reasoningContent: { reasoningText: { text: gen.thinking.pieces.join(''), signature: gen.thinking.signature } } });
  if (gen.text.length > 0) content.push({ text: gen.text.join('') });
  if (gen.tool) content.push({ toolUse: { toolUseId: gen.tool.id, name: gen.tool.name, input: toolInput(gen.tool.pieces) } });
  return JSON.stringify({ output: { message: { role: 'assistant', content } }, stopReason: gen.stop, usage: converseUsage(usage), metrics: { latencyMs: 42 } });
}

/** The payload padding Bedrock adds to stream events (`p`), so that sizes do not leak the content. */
const pad = (n: number) => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0'.slice(0, 1 + (n % 40));

function streamEvents(gen: Generation, usage: Usage): SseEvent[] {
  const events: SseEvent[] = [];
  const ev = (event: string, payload: Obj, content = false) => {
    const data = JSON.stringify({ ...payload, p: pad(events.length) });
    events.push(content ? { event, data, content } : { event, data });
  };
  ev('messageStart', { role: 'assistant' });
  let index = 0;
  if (gen.thinking) {
    for (const piece of gen.thinking.pieces) ev('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text: piece } } }, true);
    ev('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: gen.thinking.signature } } });
    ev('contentBlockStop', { contentBlockIndex: index++ });
  }
  if (gen.text.length > 0) {
    for (const piece of gen.text) ev('contentBlockDelta', { contentBlockIndex: index, delta: { text: piece } }, true);
    ev('contentBlockStop', { contentBlockIndex: index++ });
  }
  if (gen.tool) {
    ev('contentBlockStart', { contentBlockIndex: index, start: { toolUse: { toolUseId: gen.tool.id, name: gen.tool.name } } });
    for (const piece of gen.tool.pieces) ev('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input: piece } } }, true);
    ev('contentBlockStop', { contentBlockIndex: index++ });
  }
  ev('messageStop', { stopReason: gen.stop });
  ev('metadata', { usage: converseUsage(usage), metrics: { latencyMs: 42 } });
  return events;
}

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

function converse(ctx: EndpointContext): Reply {
  const denied = authenticate(ctx);
  if (denied) return denied;
  const m = PATH.exec(ctx.path)!;
  const modelId = decodeURIComponent(m[1]);
  const body = readConverse(ctx, modelId);
  if ('kind' in body) return body as JsonReply;
  const gen = generate(ctx, body);
  const usage = usageOf(ctx, body, gen);
  const headers: OutgoingHttpHeaders = { 'x-amzn-requestid': `sim-${ctx.rid}` };
  if (m[2] === 'converse-stream') return { kind: 'sse', events: streamEvents(gen, usage), headers: { ...headers, 'content-type': 'application/vnd.amazon.eventstream' }, frame: frameEvent };
  return { kind: 'json', status: 200, body: answerBody(gen, usage), headers: { ...headers, 'content-type': 'application/json' }, chunks: gen.chunks };
}

const INVOKE = /^\/model\/([^/]+)\/invoke$/;

/** InvokeModel of an embeddings model, in its family's own body (Cohere Embed, Titan Text Embeddings). */
function invoke(ctx: EndpointContext): Reply {
  const denied = authenticate(ctx);
  if (denied) return denied;
  const modelId = decodeURIComponent(INVOKE.exec(ctx.path)![1]);
  if (ctx.knobs.models && !ctx.knobs.models.includes(modelId)) return bedrockProtocol.error(404, ctx, { type: 'ResourceNotFoundException', message: 'Could not resolve the foundation model from the provided model identifier.' });
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'Malformed input request, please reformat your input and try again.');
  const headers: OutgoingHttpHeaders = { 'x-amzn-requestid': `sim-${ctx.rid}`, 'content-type': 'application/json' };
  const id = modelId.replace(/^(us|eu|apac|global)\./, '');
  const image = invokeImage(ctx, modelId, b, (message) => invalid(ctx, message));
  if (image) return image;
  if (id.startsWith('cohere.embed')) {
    const texts = b.texts;
    if (!Array.isArray(texts) || texts.length === 0 || texts.length > 96 || !texts.every((t) => typeof t === 'string')) return invalid(ctx, 'Malformed input request: #/texts: expected an array of 1 to 96 strings');
    if (typeof b.input_type !== 'string' || !['search_query', 'search_document', 'classification', 'clustering'].includes(b.input_type)) return invalid(ctx, 'Malformed input request: #/input_type: search_query, search_document, classification or clustering is required');
    const vectors = (texts as string[]).map((t) => simEmbedding(t, modelId, 1024));
    const byType = Array.isArray(b.embedding_types);
    const headersOut = { ...headers, 'x-amzn-bedrock-input-token-count': String((texts as string[]).reduce((n, t) => n + simEmbeddingTokens(t), 0)) };
    return { kind: 'json', status: 200, body: JSON.stringify({ id: `sim-emb-${ctx.rid}`, texts, embeddings: byType ? { float: vectors } : vectors, response_type: byType ? 'embeddings_by_type' : 'embeddings_floats' }), headers: headersOut, chunks: 1 };
  }
  if (id.startsWith('amazon.titan-embed')) {
    if (typeof b.inputText !== 'string' || b.inputText === '') return invalid(ctx, 'Malformed input request: #/inputText: expected a non-empty string');
    const dims = b.dimensions ?? 1024;
    if (dims !== 256 && dims !== 512 && dims !== 1024) return invalid(ctx, 'Malformed input request: #/dimensions: 256, 512 or 1024');
    return { kind: 'json', status: 200, body: JSON.stringify({ embedding: simEmbedding(b.inputText, modelId, dims as number), inputTextTokenCount: simEmbeddingTokens(b.inputText) }), headers, chunks: 1 };
  }
  return invalid(ctx, `The provided model identifier is invalid for InvokeModel in this simulator (${modelId}).`);
}

export const bedrockEndpoints: Endpoint[] = [
  { method: 'POST', path: PATH, protocol: bedrockProtocol, modelCall: true, handle: converse },
  { method: 'POST', path: INVOKE, protocol: bedrockProtocol, modelCall: true, handle: invoke },
  // The Agent Runtime's Rerank (bedrock-agent-runtime.<region>.amazonaws.com/rerank), signed like the runtime.
  { method: 'POST', path: '/rerank', protocol: bedrockProtocol, modelCall: true, handle: (ctx) => authenticate(ctx) ?? rerank(ctx, (message) => invalid(ctx, message)) },
];
