/**
 * IR request → Anthropic Messages request (`POST {baseUrl}/messages`).
 *
 * Choices (documented here because Anthropic has no equivalent for some IR features):
 * - `max_tokens` is required by Anthropic. Without an IR value it is the endpoint's `max_completion_tokens`, else
 *   DEFAULT_MAX_TOKENS (4096). With thinking on and no explicit limit, it is raised to leave room for the answer.
 * - Thinking: `{type:'enabled', budget_tokens}` from the IR `reasoning.max_tokens`, else from the effort
 *   (EFFORT_BUDGET), else medium when only `enabled: true`. `effort: 'none'`, `enabled: false` or no reasoning
 *   config → no thinking. The budget is kept below `max_tokens` (Anthropic requires budget < max_tokens); thinking
 *   is dropped when that leaves less than Anthropic's minimum of 1024, and when the caller forces a tool
 *   (`tool_choice` required or a named tool: Anthropic rejects forced tool use with thinking). With thinking on,
 *   `temperature` and `top_k` are not sent and `top_p` only when >= 0.95 (Anthropic rejects them with thinking).
 * - `temperature` is clamped to Anthropic's range 0..1 (the IR follows OpenAI's 0..2).
 * - JSON output (`response_format` json_schema / json_object): endpoints whose `supported_parameters` include
 *   `structured_outputs` get Anthropic's native `output_config.format` (json_schema only). Otherwise, and for
 *   json_object, a forced tool JSON_TOOL_NAME carries the schema as its `input_schema`; its tool_use block is turned
 *   back into text by parseResponse and the stream decoder. With caller tools and tool_choice auto the choice becomes
 *   `any` (call a tool, or answer through json_output); when the caller forces a tool (`required`/`tool`) the JSON
 *   tool is not added. Anthropic rejects forced tool choice with thinking, so with thinking on the choice stays
 *   `auto` and a system instruction asks for the tool.
 * - Tool-call arguments that are empty or not a JSON object are sent as `input: {}` (Anthropic requires an object;
 *   the following tool_result still tells the model what happened).
 * - Reasoning parts without a signature (from other providers) and summaries cannot be replayed and are dropped;
 *   refusals are replayed as text. Empty text parts are dropped (Anthropic rejects empty text blocks), and trailing
 *   whitespace of a final assistant (prefill) text is trimmed (Anthropic rejects it).
 * - Not supported by Anthropic and ignored: frequency/presence penalty, seed, message `name`, image `detail`.
 */
import { toolArgsObject, type CacheControl, type IrDocument, type IrImage, type IrMessage, type IrPart, type IrReasoningConfig, type IrRequest, type IrText, type IrTool, type IrToolChoice } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import type { UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import { leadingSystem, withoutSystemTurns } from '../../core/system-turns.js';
import { ANTHROPIC_VERSION, JSON_TOOL_NAME, type Obj } from './wire.js';

export const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's minimum `budget_tokens`. */
export const MIN_THINKING_BUDGET = 1024;
/** Thinking budget per IR effort. */
export const EFFORT_BUDGET: Record<Exclude<NonNullable<IrReasoningConfig['effort']>, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 4096,
  high: 16384,
  xhigh: 32768,
  max: 65536,
};

const JSON_TOOL_INSTRUCTION = `Give your final answer by calling the ${JSON_TOOL_NAME} tool with it.`;

const invalid = (message: string) => new UpstreamError(400, message, 'invalid_request', null, null);

function withCache(block: Obj, c: CacheControl | undefined): Obj {
  if (c) block.cache_control = c;
  return block;
}

/** Media type of base64 image data from its first bytes (Anthropic accepts jpeg, png, gif, webp). */
export function sniffImageType(b64: string): string {
  if (b64.startsWith('/9j/')) return 'image/jpeg';
  if (b64.startsWith('iVBORw0KGgo')) return 'image/png';
  if (b64.startsWith('R0lGOD')) return 'image/gif';
  if (b64.startsWith('UklGR')) return 'image/webp';
  return 'image/png';
}

/** `data:[<media type>][;base64],<data>` → base64 data and media type; null when it is not a data URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^,]*?),(.*)$/s.exec(url);
  if (!m) return null;
  const params = m[1].split(';');
  const base64 = params.some((p, i) => i > 0 && p.trim().toLowerCase() === 'base64');
  let data: string;
  try {
    data = base64 ? m[2].replace(/\s+/g, '') : Buffer.from(decodeURIComponent(m[2]), 'utf8').toString('base64');
  } catch {
    return null;
  }
  const mediaType = params[0].trim().toLowerCase() || sniffImageType(data);
  return { mediaType, data };
}

function imageBlock(p: IrImage): Obj {
  let source: Obj;
  if (p.data) source = { type: 'base64', media_type: p.media_type ?? sniffImageType(p.data), data: p.data };
  else if (p.url?.startsWith('data:')) {
    const d = parseDataUrl(p.url);
    if (!d) throw invalid('Invalid image data URL');
    source = { type: 'base64', media_type: d.mediaType, data: d.data };
  } else if (p.url) source = { type: 'url', url: p.url };
  else throw invalid('Image part has neither url nor data');
  return withCache({ type: 'image', source }, p.cache_control);
}

/**
 * A document → a `document` block: inline data as a base64 source (text as a text source; Anthropic reads base64 PDFs only), an Anthropic file id
 * as a file source (the Files API beta is added to the request), a URL as a URL source; the file name as its title.
 */
export function documentBlock(p: IrDocument): Obj {
  let source: Obj;
  const mediaType = p.media_type ?? 'application/pdf';
  if (p.data !== undefined) {
    source = mediaType.startsWith('text/') ? { type: 'text', media_type: 'text/plain', data: Buffer.from(p.data, 'base64').toString('utf8') } : { type: 'base64', media_type: mediaType, data: p.data };
  } else if (p.file_id) source = { type: 'file', file_id: p.file_id };
  else if (p.url?.startsWith('data:')) {
    const d = parseDataUrl(p.url);
    if (!d) throw invalid('Invalid document data URL');
    return documentBlock({ ...p, url: undefined, data: d.data, media_type: d.mediaType });
  } else if (p.url) source = { type: 'url', url: p.url };
  else throw invalid('Document part has neither data, file id nor url');
  const b: Obj = { type: 'document', source };
  if (p.filename) b.title = p.filename;
  return withCache(b, p.cache_control);
}

function textBlock(p: IrText): Obj | null {
  return p.text === '' ? null : withCache({ type: 'text', text: p.text }, p.cache_control);
}

/** One IR part as Anthropic content blocks (none when it cannot be sent). */
function block(p: IrPart): Obj | null {
  switch (p.type) {
    case 'text':
      return textBlock(p);
    case 'image':
      return imageBlock(p);
    case 'document':
      return documentBlock(p);
    case 'tool_call':
      return withCache({ type: 'tool_use', id: p.id, name: p.name, input: toolArgsObject(p.arguments) }, p.cache_control);
    case 'tool_result': {
      const b: Obj = { type: 'tool_result', tool_use_id: p.tool_call_id };
      if (typeof p.content === 'string') {
        if (p.content !== '') b.content = p.content;
      } else {
        const content = p.content.map((c) => (c.type === 'text' ? textBlock(c) : imageBlock(c))).filter((c): c is Obj => c !== null);
        if (content.length > 0) b.content = content;
      }
      if (p.is_error) b.is_error = true;
      return withCache(b, p.cache_control);
    }
    case 'reasoning':
      // Only Anthropic's own signatures (or of unknown origin) pass: another provider's thinking is left out, as the
      // gateway's own signed thinking is (Anthropic verifies its own signatures only, and accepts earlier turns without).
      return p.signature && !p.summary && (p.origin === undefined || p.origin === 'anthropic') ? { type: 'thinking', thinking: p.text, signature: p.signature } : null;
    case 'redacted_reasoning':
      return { type: 'redacted_thinking', data: p.data };
    case 'refusal':
      return p.text === '' ? null : { type: 'text', text: p.text };
  }
}

interface Turn {
  role: 'user' | 'assistant' | 'system';
  /** tool_result blocks: Anthropic wants them first in a user message. */
  results: Obj[];
  rest: Obj[];
}

/**
 * IR messages → strictly alternating Anthropic messages (consecutive same-role messages merged). System turns stay in
 * place (the caller decides whether the upstream gets them natively; see `requestBody`).
 */
export function toMessages(messages: IrMessage[]): Obj[] {
  const turns: Turn[] = [];
  for (const m of messages) {
    const results: Obj[] = [];
    const rest: Obj[] = [];
    for (const p of m.content) {
      const b = block(p);
      if (b) (b.type === 'tool_result' ? results : rest).push(b);
    }
    if (results.length + rest.length === 0) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === m.role) {
      last.results.push(...results);
      last.rest.push(...rest);
    } else turns.push({ role: m.role, results, rest });
  }
  const out = turns.map((t) => ({ role: t.role, content: [...t.results, ...t.rest] }));
  // A final assistant message is a prefill: Anthropic rejects trailing whitespace in it.
  const final = out[out.length - 1];
  if (final?.role === 'assistant') {
    const lastBlock = final.content[final.content.length - 1];
    if (lastBlock.type === 'text' && typeof lastBlock.text === 'string') {
      const trimmed = lastBlock.text.trimEnd();
      if (trimmed === '') final.content.pop();
      else lastBlock.text = trimmed;
      if (final.content.length === 0) out.pop();
    }
  }
  return out;
}

/** The thinking budget the IR asks for, before fitting it under max_tokens; null = no thinking. */
export function thinkingBudget(r: IrReasoningConfig | undefined): number | null {
  if (!r || r.enabled === false || r.effort === 'none' || r.max_tokens === 0) return null;
  if (r.max_tokens !== undefined && r.max_tokens > 0) return Math.max(MIN_THINKING_BUDGET, Math.floor(r.max_tokens));
  if (r.effort) return EFFORT_BUDGET[r.effort];
  return r.enabled ? EFFORT_BUDGET.medium : null;
}

function toolDef(t: IrTool, strict: boolean): Obj {
  if (t.name === JSON_TOOL_NAME) throw invalid(`Tool name "${JSON_TOOL_NAME}" is reserved by the gateway`);
  const def: Obj = { name: t.name };
  if (t.description !== undefined) def.description = t.description;
  def.input_schema = objectSchema(t.parameters);
  if (strict && t.strict) def.strict = true;
  return withCache(def, t.cache_control);
}

/** Anthropic requires `input_schema` to be an object schema with `type: 'object'`. */
function objectSchema(s: Record<string, unknown> | undefined): Obj {
  if (!s || Object.keys(s).length === 0) return { type: 'object', properties: {} };
  return s.type === undefined ? { type: 'object', ...s } : s;
}

function toolChoice(c: IrToolChoice | undefined): Obj | undefined {
  switch (c?.type) {
    case undefined:
      return undefined;
    case 'auto':
      return { type: 'auto' };
    case 'none':
      return { type: 'none' };
    case 'required':
      return { type: 'any' };
    case 'tool':
      return { type: 'tool', name: c.name };
  }
}

/** The Anthropic request body for an IR request. */
export function requestBody(req: IrRequest, ctx: UpstreamContext): Obj {
  const endpointMax = ctx.endpoint.max_completion_tokens ?? null;
  const structured = ctx.endpoint.supported_parameters.includes('structured_outputs');
  let maxTokens = req.max_tokens ?? endpointMax ?? DEFAULT_MAX_TOKENS;
  const callerForcesTool = (req.tools?.length ?? 0) > 0 && (req.tool_choice?.type === 'required' || req.tool_choice?.type === 'tool');
  // Anthropic rejects thinking with a forced tool choice: the caller's explicit tool choice wins.
  let budget = callerForcesTool ? null : thinkingBudget(req.reasoning);
  if (budget !== null) {
    if (req.max_tokens === undefined && endpointMax === null && budget >= maxTokens) maxTokens = budget + DEFAULT_MAX_TOKENS;
    if (budget >= maxTokens) budget = maxTokens - 1;
    if (budget < MIN_THINKING_BUDGET) budget = null;
  }
  const thinking = budget !== null;

  // Leading system turns join `system`; later ones go natively when the client sent Anthropic betas (Claude Code's
  // mid-conversation system turns), else as user-side text (src/core/system-turns.ts).
  const turns = req.anthropic_beta?.length ? leadingSystem(req.messages) : withoutSystemTurns(req.messages);
  const messages = 'rest' in turns ? turns.rest : turns.messages;
  const system = [...req.system, ...turns.system].map(textBlock).filter((b): b is Obj => b !== null);

  // Tools, tool choice and JSON output.
  const tools = (req.tools ?? []).map((t) => toolDef(t, structured));
  let choice = tools.length > 0 ? toolChoice(req.tool_choice) : undefined;
  const rf = req.response_format;
  let outputConfig: Obj | undefined;
  if (rf?.type === 'json_schema' && structured) {
    outputConfig = { format: { type: 'json_schema', schema: rf.schema } };
  } else if (rf && rf.type !== 'text') {
    if (!callerForcesTool) {
      const schema = rf.type === 'json_schema' ? objectSchema(rf.schema) : { type: 'object' };
      const what = rf.type === 'json_schema' ? (rf.description ?? `Return the final answer as a JSON object "${rf.name}".`) : 'Return the final answer as a JSON object.';
      const callerToolsUsable = tools.length > 0 && req.tool_choice?.type !== 'none';
      tools.push({ name: JSON_TOOL_NAME, description: `${what} Call this tool exactly once, with the whole answer.`, input_schema: schema });
      if (thinking) {
        // Anthropic rejects `any`/`tool` choices with thinking: ask for the tool instead.
        choice = { type: 'auto' };
        system.push({ type: 'text', text: JSON_TOOL_INSTRUCTION });
      } else choice = callerToolsUsable ? { type: 'any' } : { type: 'tool', name: JSON_TOOL_NAME };
    }
  }
  if (req.parallel_tool_calls === false && tools.length > 0) {
    if (!choice) choice = { type: 'auto' };
    if (choice.type !== 'none') choice.disable_parallel_tool_use = true;
  }

  const body: Obj = { model: req.model, max_tokens: maxTokens };
  if (system.length > 0) body.system = system;
  body.messages = toMessages(messages);
  if (tools.length > 0) body.tools = tools;
  if (choice) body.tool_choice = choice;
  if (thinking) body.thinking = { type: 'enabled', budget_tokens: budget };
  if (outputConfig) body.output_config = outputConfig;
  if (req.temperature !== undefined && !thinking) body.temperature = Math.min(1, Math.max(0, req.temperature));
  if (req.top_p !== undefined && (!thinking || req.top_p >= 0.95)) body.top_p = req.top_p;
  if (req.top_k !== undefined && !thinking) body.top_k = req.top_k;
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.user) body.metadata = { user_id: req.user };
  body.stream = req.stream;
  return body;
}

/** The headers of an Anthropic API request (version, credential, the provider's own headers). */
export function anthropicHeaders(ctx: Pick<UpstreamContext, 'provider' | 'apiKey'>, stream: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: stream ? 'text/event-stream' : 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
    'user-agent': 'model-gateway/0.1',
    ...ctx.provider.headers,
  };
  if (ctx.apiKey) headers['x-api-key'] = ctx.apiKey;
  return headers;
}

/** `{base}/<path>` of an Anthropic API (`messages`, `messages/count_tokens`). */
export function anthropicUrl(provider: UpstreamContext['provider'], path: string): URL {
  return new URL(`${provider.baseUrl.replace(/\/+$/, '')}/${path}`);
}

/** Anthropic's Files API beta (file sources in `document` blocks). */
export const FILES_BETA = 'files-api-2025-04-14';

const hasFileDocument = (req: IrRequest): boolean => req.messages.some((m) => m.content.some((p) => p.type === 'document' && p.file_id !== undefined && p.data === undefined));

export function buildRequest(req: IrRequest, ctx: UpstreamContext): UpstreamHttpRequest {
  const headers = anthropicHeaders(ctx, req.stream);
  // The client's `anthropic-beta` values (Claude Code's), after the provider's own.
  // A document by file id needs the Files API beta.
  const betas = hasFileDocument(req) ? [...(req.anthropic_beta ?? []), FILES_BETA] : req.anthropic_beta;
  if (betas?.length) headers['anthropic-beta'] = [...new Set([...(headers['anthropic-beta']?.split(',').map((v) => v.trim()) ?? []), ...betas])].filter(Boolean).join(',');
  return { url: anthropicUrl(ctx.provider, 'messages'), headers, body: JSON.stringify(requestBody(req, ctx)) };
}
