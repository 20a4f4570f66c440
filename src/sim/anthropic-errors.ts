/** The Anthropic simulator's error replies and request validation (anthropic.ts describes the protocol). */
import type { OutgoingHttpHeaders } from 'node:http';
import type { EndpointContext, JsonReply, Protocol } from './protocol.js';
import { anthropicDocument } from './documents.js';

const DEFAULT_MODEL = 'claude-sim';
export const JSON_HEADERS: OutgoingHttpHeaders = { 'content-type': 'application/json' };

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

// ---------------------------------------------------------------- errors

/** Anthropic's documented error type (and a typical message) per HTTP status. */
function defaultError(status: number, model: string): { type: string; message: string } {
  switch (status) {
    case 400:
      return { type: 'invalid_request_error', message: 'prompt is too long: 200001 tokens > 200000 maximum' };
    case 401:
      return { type: 'authentication_error', message: 'invalid x-api-key' };
    case 402:
      return { type: 'billing_error', message: 'Your credit balance is too low to access the Anthropic API.' };
    case 403:
      return { type: 'permission_error', message: 'Your API key does not have permission to use the specified resource.' };
    case 404:
      return { type: 'not_found_error', message: `model: ${model}` };
    case 413:
      return { type: 'request_too_large', message: 'Request exceeds the maximum allowed number of bytes.' };
    case 429:
      return { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' };
    case 500:
      return { type: 'api_error', message: 'Internal server error' };
    case 504:
      return { type: 'timeout_error', message: 'Request timed out' };
    case 529:
      return { type: 'overloaded_error', message: 'Overloaded' };
    default:
      return { type: status < 500 ? 'invalid_request_error' : 'api_error', message: `Simulated error (HTTP ${status}).` };
  }
}

const DOCUMENTED_STATUSES = new Set([400, 401, 402, 403, 404, 413, 429, 500, 504, 529]);

function requestModel(ctx: Partial<EndpointContext>): string {
  const m = isObj(ctx.body) ? ctx.body.model : undefined;
  return ctx.knobs?.model ?? (typeof m === 'string' ? m : DEFAULT_MODEL);
}

export const anthropicProtocol: Protocol = {
  name: 'anthropic',
  error(status, ctx, info) {
    const d = defaultError(status, requestModel(ctx));
    // Documented statuses keep their own type (the server passes OpenAI-style types for auth and bad JSON).
    const type = DOCUMENTED_STATUSES.has(status) ? d.type : (info?.type ?? d.type);
    let message = info?.message ?? d.message;
    if (status === 401 && info?.code === 'invalid_api_key') {
      message = ctx.headers?.['x-api-key'] || ctx.headers?.authorization ? 'invalid x-api-key' : 'x-api-key header is required';
    }
    const requestId = `req_sim${ctx.rid ?? '0'}`;
    const headers: OutgoingHttpHeaders = { ...JSON_HEADERS, 'request-id': requestId };
    const retryAfter = ctx.knobs?.retryAfter;
    if (status === 429 || retryAfter !== undefined) headers['retry-after'] = String(retryAfter ?? 1);
    const body = JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
    return { kind: 'json', status, body, headers };
  },
  streamError() {
    // The documented example of a mid-stream error.
    return { event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' };
  },
};

const invalid = (ctx: EndpointContext, message: string): JsonReply =>
  anthropicProtocol.error(400, ctx, { message, type: 'invalid_request_error' });

export const blocksOf = (content: unknown): Obj[] => (Array.isArray(content) ? content.filter(isObj) : []);

/** Validation close to Anthropic's (field errors are reported as `<path>: <problem>`). */
export function validate(ctx: EndpointContext, countOnly = false): JsonReply | undefined {
  if (ctx.headers['anthropic-version'] === undefined) return invalid(ctx, 'anthropic-version: header is required');
  const b = ctx.body;
  if (!isObj(b)) return invalid(ctx, 'Input should be a valid dictionary');
  if (b.model === undefined) return invalid(ctx, 'model: Field required');
  if (typeof b.model !== 'string') return invalid(ctx, 'model: Input should be a valid string');
  if (!countOnly) {
    if (b.max_tokens === undefined) return invalid(ctx, 'max_tokens: Field required');
    if (!Number.isInteger(b.max_tokens)) return invalid(ctx, 'max_tokens: Input should be a valid integer');
    if ((b.max_tokens as number) < 1) return invalid(ctx, 'max_tokens: Input should be greater than or equal to 1');
  }
  if (b.messages === undefined) return invalid(ctx, 'messages: Field required');
  if (!Array.isArray(b.messages)) return invalid(ctx, 'messages: Input should be a valid list');
  if (b.messages.length === 0) return invalid(ctx, 'messages: at least one message is required');
  for (let i = 0; i < b.messages.length; i++) {
    const m: unknown = b.messages[i];
    if (!isObj(m)) return invalid(ctx, `messages.${i}: Input should be a valid dictionary`);
    // Mid-conversation system turns need a beta (Claude Code sends its betas); without one the role is refused.
    const system = m.role === 'system' && ctx.headers['anthropic-beta'] !== undefined;
    if (m.role !== 'user' && m.role !== 'assistant' && !system) return invalid(ctx, `messages.${i}.role: Input should be 'user' or 'assistant'`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return invalid(ctx, `messages.${i}.content: Input should be a valid string or list`);
    const blocks = blocksOf(m.content);
    for (let j = 0; j < blocks.length; j++) {
      if (blocks[j].type === 'text' && blocks[j].text === '') return invalid(ctx, `messages: text content blocks must be non-empty`);
      const docErr = anthropicDocument(blocks[j], `messages.${i}.content.${j}`, String(ctx.headers['anthropic-beta'] ?? ''));
      if (docErr) return invalid(ctx, docErr);
    }
    // Every tool_result answers a tool_use of the previous (assistant) message.
    const results = blocks.filter((x) => x.type === 'tool_result');
    if (results.length > 0) {
      const prev: unknown = b.messages[i - 1];
      const ids = new Set(isObj(prev) && prev.role === 'assistant' ? blocksOf(prev.content).filter((x) => x.type === 'tool_use').map((x) => x.id) : []);
      for (const r of results) {
        if (!ids.has(r.tool_use_id)) {
          return invalid(
            ctx,
            `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(r.tool_use_id)}. ` +
              'Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
          );
        }
      }
    }
  }
  if (b.temperature !== undefined && (typeof b.temperature !== 'number' || b.temperature < 0 || b.temperature > 1)) {
    return invalid(ctx, 'temperature: Input should be less than or equal to 1');
  }
  if (b.tools !== undefined) {
    if (!Array.isArray(b.tools)) return invalid(ctx, 'tools: Input should be a valid list');
    for (let i = 0; i < b.tools.length; i++) {
      const t: unknown = b.tools[i];
      if (!isObj(t) || typeof t.name !== 'string') return invalid(ctx, `tools.${i}.name: Field required`);
      if (t.type === undefined && !isObj(t.input_schema)) return invalid(ctx, `tools.${i}.custom.input_schema: Field required`);
    }
  }
  const th = b.thinking;
  if (!countOnly && isObj(th) && th.type === 'enabled') {
    const budget = th.budget_tokens;
    if (!Number.isInteger(budget) || (budget as number) < 1024) {
      return invalid(ctx, 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    }
    if ((budget as number) >= (b.max_tokens as number)) return invalid(ctx, '`max_tokens` must be greater than `thinking.budget_tokens`.');
    if (b.temperature !== undefined && b.temperature !== 1) {
      return invalid(ctx, '`temperature` may only be set to 1 when thinking is enabled.');
    }
    if (b.top_k !== undefined) return invalid(ctx, '`top_k` must be unset when thinking is enabled.');
    const tc = b.tool_choice;
    if (isObj(tc) && (tc.type === 'any' || tc.type === 'tool')) {
      return invalid(ctx, 'Thinking may not be enabled when tool_choice forces tool use.');
    }
  }
  const models = ctx.knobs.models;
  if (models !== undefined && !models.includes(b.model)) return anthropicProtocol.error(404, ctx);
  return undefined;
}
