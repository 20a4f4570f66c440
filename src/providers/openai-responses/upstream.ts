/**
 * The OpenAI Responses API (`POST {baseUrl}/responses`) as an upstream protocol, through the IR.
 *
 * Requests are stateless (`store: false`): the whole conversation is sent as `input` items every time, and reasoning
 * is carried across turns by its `encrypted_content` (`include: ["reasoning.encrypted_content"]` when reasoning is
 * on). Mapping choices:
 * - System parts → `instructions` (joined with blank lines).
 * - User text/images → `message` items with `input_text` / `input_image`; tool results → `function_call_output`
 *   items (string output, or `input_text`/`input_image` items for rich results); order kept.
 * - Assistant text/refusals → `message` items with `output_text` / `refusal`; tool calls → `function_call` items.
 *   Items are sent without ids (they are not stored upstream).
 * - Reasoning: an IR redacted part (the `encrypted_content`) becomes a `reasoning` item, with the summary parts just
 *   before it as its `summary`. Reasoning text without encrypted content (e.g. from another provider) cannot be
 *   replayed to OpenAI and is dropped.
 * - Tools: `{type:"function", name, description, parameters, strict}` with `strict` false unless asked (the
 *   Responses API would otherwise default to strict schemas).
 * - Reasoning: `reasoning.effort` as for chat (see openaiEffort); `summary` as asked, or `auto` when reasoning is
 *   enabled explicitly (`enabled: true`, e.g. Anthropic-style thinking) and not excluded.
 * - Not in the Responses API and dropped: `stop`, `seed`, `top_k`, `frequency_penalty`, `presence_penalty`.
 * - Image output (`modalities` with `image`, docs/images.md): OpenAI's hosted `image_generation` tool is added; its
 *   `image_generation_call` items come back as IR images (streamed: partial images as `image_partial` events).
 * - Answers: `output_text` → text, `refusal` → refusal, `function_call` → tool call (`call_id` is the id),
 *   `custom_tool_call` (a free-form tool) → tool call whose arguments are `{"input": …}` (as the IR carries custom
 *   tools, inbound/responses-tools.ts; streamed `custom_tool_call_input` deltas are escaped into that JSON), both with
 *   their `namespace` when the tool is namespaced,
 *   `reasoning` → summary parts (`summary: true`), `reasoning_text` content → reasoning, `encrypted_content` →
 *   redacted reasoning. Status `incomplete` maps to `length` (max_output_tokens) or `content_filter`.
 */
import { systemTexts } from '../../core/system-turns.js';
import { mapUpstreamStatus, UpstreamError } from '../../core/provider-errors.js';
import { chatHeaders } from '../openai/chat.js';
import { imageUrl, invalidResponse, openaiEffort, parseJsonObject } from '../openai/ir-upstream.js';
import { checkResponse } from './schemas.js';
import { sniffImageType } from '../images.js';
import type { IrDocument, IrFinishReason, IrImage, IrMessage, IrPart, IrRequest, IrResponse, IrText, IrUsage } from '../../core/ir.js';
import type { UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

// ------------------------------------------------------------------------------------------------ IR → request

function inputImage(p: IrImage): Obj {
  return { type: 'input_image', image_url: imageUrl(p), detail: p.detail ?? 'auto' };
}

/** A document → an `input_file` item: inline data as a `file_data` data URL, a `file_id`, or a `file_url`. */
export function inputFile(p: IrDocument): Obj {
  const out: Obj = { type: 'input_file' };
  if (p.filename) out.filename = p.filename;
  if (p.data !== undefined) out.file_data = `data:${p.media_type ?? 'application/pdf'};base64,${p.data}`;
  else if (p.file_id) out.file_id = p.file_id;
  else if (p.url?.startsWith('data:')) out.file_data = p.url;
  else if (p.url) out.file_url = p.url;
  return out;
}

function userItems(m: IrMessage): Obj[] {
  const out: Obj[] = [];
  let pending: Obj[] = [];
  const flush = () => {
    if (pending.length > 0) out.push({ type: 'message', role: 'user', content: pending });
    pending = [];
  };
  for (const p of m.content) {
    if (p.type === 'text') pending.push({ type: 'input_text', text: p.text });
    else if (p.type === 'image') pending.push(inputImage(p));
    else if (p.type === 'document') pending.push(inputFile(p));
    else if (p.type === 'tool_result') {
      flush();
      const output =
        typeof p.content === 'string' ? p.content : p.content.map((c) => (c.type === 'text' ? { type: 'input_text', text: c.text } : inputImage(c)));
      out.push({ type: 'function_call_output', call_id: p.tool_call_id, output });
    }
  }
  flush();
  return out;
}

function assistantItems(m: IrMessage): Obj[] {
  const out: Obj[] = [];
  let content: Obj[] = [];
  let summaries: Obj[] = [];
  const flush = () => {
    if (content.length > 0) out.push({ type: 'message', role: 'assistant', content });
    content = [];
  };
  for (const p of m.content) {
    switch (p.type) {
      case 'reasoning':
        if (p.summary) summaries.push({ type: 'summary_text', text: p.text });
        break;
      case 'redacted_reasoning':
        flush();
        out.push({ type: 'reasoning', summary: summaries, encrypted_content: p.data });
        summaries = [];
        break;
      case 'text':
        content.push({ type: 'output_text', text: p.text });
        break;
      case 'refusal':
        content.push({ type: 'refusal', refusal: p.text });
        break;
      case 'tool_call':
        flush();
        out.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: p.arguments });
        break;
    }
  }
  flush();
  return out;
}

/** Whether the request turns reasoning on (so that encrypted reasoning can be asked for). */
function reasoningOn(req: IrRequest): boolean {
  const r = req.reasoning;
  if (!r) return false;
  if (r.enabled === false || r.effort === 'none') return false;
  return r.enabled === true || r.effort !== undefined || r.summary !== undefined || r.max_tokens !== undefined;
}

const IMAGE_FORMATS: Record<string, string> = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' };

/** The media type of a generated image: sniffed from its bytes, else its `output_format`, else PNG (the default). */
export function imageMediaType(b64: string, format: unknown): string {
  return sniffImageType(b64) ?? IMAGE_FORMATS[str(format) ?? ''] ?? 'image/png';
}

/** Image output asked for (`modalities` with `image`): OpenAI's hosted `image_generation` tool, unless already there. */
export function withImageTool(tools: unknown): unknown[] {
  const list = Array.isArray(tools) ? tools : [];
  return list.some((t) => isObj(t) && t.type === 'image_generation') ? list : [...list, { type: 'image_generation' }];
}

/** The Responses API body of an IR request. */
export function buildResponsesBody(req: IrRequest): Obj {
  const input: Obj[] = [];
  for (const m of req.messages) {
    // A mid-conversation system turn: a system message item in place.
    if (m.role === 'system') {
      const texts = systemTexts(m);
      if (texts.length > 0) input.push({ type: 'message', role: 'system', content: texts.map((t) => ({ type: 'input_text', text: t.text })) });
    } else input.push(...(m.role === 'user' ? userItems(m) : assistantItems(m)));
  }
  const body: Obj = { model: req.model };
  if (req.system.length > 0) body.instructions = req.system.map((p: IrText) => p.text).join('\n\n');
  body.input = input;
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      name: t.name,
      ...(t.description !== undefined ? { description: t.description } : {}),
      parameters: t.parameters,
      strict: t.strict ?? false,
    }));
  }
  if (req.modalities?.includes('image')) body.tools = withImageTool(body.tools);
  if (req.tool_choice) body.tool_choice = req.tool_choice.type === 'tool' ? { type: 'function', name: req.tool_choice.name } : req.tool_choice.type;
  if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  if (req.max_tokens !== undefined) body.max_output_tokens = req.max_tokens;
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.top_p !== undefined) body.top_p = req.top_p;
  const rf = req.response_format;
  if (rf) {
    if (rf.type === 'json_schema') {
      const format: Obj = { type: 'json_schema', name: rf.name, schema: rf.schema };
      if (rf.strict !== undefined) format.strict = rf.strict;
      if (rf.description !== undefined) format.description = rf.description;
      body.text = { format };
    } else body.text = { format: { type: rf.type } };
  }
  const effort = openaiEffort(req);
  const on = reasoningOn(req);
  // Reasoning explicitly enabled (not only an effort) asks to see it: OpenAI shows reasoning as summaries only.
  const summary = req.reasoning?.summary ?? (req.reasoning?.enabled === true && req.reasoning.exclude !== true ? 'auto' : undefined);
  if (effort || (on && summary)) {
    const r: Obj = {};
    if (effort) r.effort = effort;
    if (on && summary) r.summary = summary;
    body.reasoning = r;
  }
  if (req.user !== undefined) body.user = req.user;
  body.store = false;
  if (on) body.include = ['reasoning.encrypted_content'];
  if (req.stream) body.stream = true;
  return body;
}

export function buildResponsesRequest(req: IrRequest, ctx: UpstreamContext): UpstreamHttpRequest {
  return {
    url: new URL(`${ctx.provider.baseUrl}/responses`),
    headers: chatHeaders(ctx.provider, ctx.apiKey, req.stream),
    body: JSON.stringify(buildResponsesBody(req)),
  };
}

// ------------------------------------------------------------------------------------------------ answer → IR

/**
 * Responses usage → IR usage (input includes cached tokens, output includes reasoning tokens). The hosted image
 * tool's tokens (`tool_usage.image_gen` of the response) are added: its prompt to the input, its image tokens to the
 * output (billed at the endpoint's prices, as image tokens are everywhere: docs/images.md).
 */
export function irUsageFromResponses(u: unknown, toolUsage?: unknown): IrUsage | null {
  if (!isObj(u) || typeof u.input_tokens !== 'number') return null;
  const inDet = isObj(u.input_tokens_details) ? u.input_tokens_details : {};
  const outDet = isObj(u.output_tokens_details) ? u.output_tokens_details : {};
  const img = isObj(toolUsage) && isObj(toolUsage.image_gen) ? toolUsage.image_gen : {};
  return {
    input: u.input_tokens + num(img.input_tokens),
    output: num(u.output_tokens) + num(img.output_tokens),
    cache_read: num(inDet.cached_tokens),
    cache_write: num(inDet.cache_write_tokens),
    reasoning: num(outDet.reasoning_tokens),
  };
}

/** IR parts of one output item. */
function itemParts(item: Obj): IrPart[] {
  const out: IrPart[] = [];
  switch (item.type) {
    case 'reasoning':
      if (Array.isArray(item.summary)) for (const s of item.summary) if (isObj(s) && typeof s.text === 'string') out.push({ type: 'reasoning', text: s.text, summary: true });
      if (Array.isArray(item.content)) for (const c of item.content) if (isObj(c) && typeof c.text === 'string') out.push({ type: 'reasoning', text: c.text });
      if (typeof item.encrypted_content === 'string' && item.encrypted_content) out.push({ type: 'redacted_reasoning', data: item.encrypted_content });
      break;
    case 'message':
      if (Array.isArray(item.content)) {
        for (const c of item.content) {
          if (!isObj(c)) continue;
          if (c.type === 'output_text' && typeof c.text === 'string') out.push({ type: 'text', text: c.text });
          else if (c.type === 'refusal' && typeof c.refusal === 'string') out.push({ type: 'refusal', text: c.refusal });
        }
      }
      break;
    case 'image_generation_call': {
      // The hosted image tool's image (docs/images.md): base64 in `result` (null while not completed).
      const data = str(item.result);
      if (data) out.push({ type: 'image', data, media_type: imageMediaType(data, item.output_format) });
      break;
    }
    case 'function_call':
    case 'custom_tool_call': {
      const args = item.type === 'custom_tool_call' ? customArgs(str(item.input) ?? '') : (str(item.arguments) ?? '');
      const ns = str(item.namespace);
      out.push({ type: 'tool_call', id: str(item.call_id) ?? str(item.id) ?? '', name: str(item.name) ?? '', arguments: args, ...(ns ? { namespace: ns } : {}) });
      break;
    }
  }
  return out;
}

/** A free-form tool's input as the IR's JSON arguments, `{"input": …}` (and its pieces: opening, escaped text, closing). */
export const customArgs = (input: string): string => JSON.stringify({ input });
export const CUSTOM_OPEN = '{"input":"';
export const customPiece = (text: string): string => JSON.stringify(text).slice(1, -1);

/** The IR finish of a response object's status. */
export function finishOf(resp: Obj, hasToolCalls: boolean): { finish_reason: IrFinishReason; native_finish_reason: string | null } {
  const status = str(resp.status) ?? 'completed';
  if (status === 'incomplete') {
    const reason = isObj(resp.incomplete_details) ? str(resp.incomplete_details.reason) : undefined;
    return { finish_reason: reason === 'content_filter' ? 'content_filter' : 'length', native_finish_reason: reason ?? 'incomplete' };
  }
  if (status === 'failed') return { finish_reason: 'error', native_finish_reason: 'failed' };
  return { finish_reason: hasToolCalls ? 'tool_calls' : 'stop', native_finish_reason: status };
}

/** A Responses error (`response.error` of a failed response, or an `error` stream event) as the gateway's error. */
export function responsesError(e: unknown, raw: unknown): UpstreamError {
  const err = isObj(e) ? e : {};
  const code = str(err.code) ?? str(err.type) ?? '';
  const message = str(err.message) ?? 'Provider returned error';
  let status = 502;
  if (code === 'rate_limit_exceeded') status = 429;
  else if (/^invalid_|context_length_exceeded/.test(code)) status = 400;
  return mapUpstreamStatus(status, message, raw, null, code === 'context_length_exceeded');
}

/** A 2xx Responses body as an IR response; throws UpstreamError for a failed response or an invalid answer. */
export function parseResponsesResponse(text: string): IrResponse {
  const json = parseJsonObject(text);
  if (!Array.isArray(json.output)) {
    if (json.error) throw responsesError(json.error, json);
    throw invalidResponse('Provider returned an invalid response (no output)', json);
  }
  if (json.status === 'failed') throw responsesError(json.error, json);
  checkResponse(json);
  const content: IrPart[] = [];
  for (const item of json.output) if (isObj(item)) content.push(...itemParts(item));
  return {
    id: str(json.id) ?? null,
    model: str(json.model) ?? null,
    content,
    ...finishOf(json, content.some((p) => p.type === 'tool_call')),
    usage: irUsageFromResponses(json.usage, json.tool_usage),
    service_tier: str(json.service_tier) ?? null,
    system_fingerprint: null,
  };
}
