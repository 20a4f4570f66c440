/**
 * IR request → OpenAI Chat Completions body (`POST {baseUrl}/chat/completions`). Works for OpenAI and for every
 * OpenAI-compatible server (vLLM, Together, Groq, DeepSeek, OpenRouter-style hubs, the simulator).
 *
 * Mapping choices (documented because they lose or add information):
 * - System parts become ONE `system` message (or `developer`, see ChatBodyOptions): a string when there is a single
 *   part, an array of text parts otherwise.
 * - `cache_control` marks are dropped unless ChatBodyOptions.cacheControl is set (OpenAI caches implicitly and
 *   strict OpenAI-compatible servers reject unknown part fields).
 * - Reasoning kept in the history is sent OpenRouter-style on the assistant message: `reasoning` (the text) and
 *   `reasoning_details[]` (`reasoning.text` with its signature, `reasoning.summary`, `reasoning.encrypted` for
 *   redacted reasoning), so hubs that forward it to Anthropic/Gemini keep the signatures. Plain OpenAI ignores it.
 * - A user message holding tool results becomes `role:"tool"` messages (in order) followed by a user message for the
 *   remaining parts. Images inside a tool result (chat has no images in tool messages) go into that user message.
 *   `is_error` has no chat equivalent and is dropped.
 * - `max_tokens` is sent as `max_completion_tokens`, or as `max_tokens` when the endpoint lists only that name.
 * - `reasoning.effort` becomes `reasoning_effort` (`max` → `xhigh`; `enabled:false` → `none`; `enabled:true` alone → `medium`).
 * - Streams always ask for `stream_options.include_usage`.
 * - `modalities` is sent as is; generated images (`message.images` / `delta.images` data URLs, the hosted router's
 *   shape) come back as IR image parts / events.
 */
import { systemTexts } from '../../core/system-turns.js';
import type { IrDocument, IrImage, IrMessage, IrPart, IrRequest, IrText, IrToolResult } from '../../core/ir.js';
import { imageUrl, openaiEffort, type Obj } from './ir-shared.js';

// ------------------------------------------------------------------------------------------------ IR → chat body

export interface ChatBodyOptions {
  /** Role of the system message; `developer` for reasoning models that want it. Default `system`. */
  systemRole?: 'system' | 'developer';
  /** Keep `cache_control` marks on content parts and tools (for hubs that forward them). Default false. */
  cacheControl?: boolean;
  /** Send the output limit as `max_tokens` instead of `max_completion_tokens`. Default false. */
  legacyMaxTokens?: boolean;
  /** Send `reasoning` / `reasoning_details` on assistant messages. Default true. */
  reasoningHistory?: boolean;
}

function textPart(p: IrText, cc: boolean): Obj {
  return cc && p.cache_control ? { type: 'text', text: p.text, cache_control: p.cache_control } : { type: 'text', text: p.text };
}

function imagePart(p: IrImage, cc: boolean): Obj {
  const image_url: Obj = { url: imageUrl(p) };
  if (p.detail) image_url.detail = p.detail;
  const out: Obj = { type: 'image_url', image_url };
  if (cc && p.cache_control) out.cache_control = p.cache_control;
  return out;
}

/** A document → a chat `file` part: inline data as a `file_data` data URL (or the URL itself), or a `file_id`. */
export function filePart(p: IrDocument, cc: boolean): Obj {
  const file: Obj = {};
  if (p.filename) file.filename = p.filename;
  if (p.data !== undefined) file.file_data = `data:${p.media_type ?? 'application/pdf'};base64,${p.data}`;
  else if (p.file_id) file.file_id = p.file_id;
  else if (p.url) file.file_data = p.url;
  const out: Obj = { type: 'file', file };
  if (cc && p.cache_control) out.cache_control = p.cache_control;
  return out;
}

/** Text parts as a chat `content`: a plain string when nothing else needs the array form. */
function textContent(parts: IrText[], cc: boolean): string | Obj[] {
  if (parts.length === 1 && !(cc && parts[0].cache_control)) return parts[0].text;
  return parts.map((p) => textPart(p, cc));
}

function userContent(parts: Array<IrText | IrImage | IrDocument>, cc: boolean): string | Obj[] {
  if (parts.every((p) => p.type === 'text')) return textContent(parts as IrText[], cc);
  return parts.map((p) => (p.type === 'text' ? textPart(p, cc) : p.type === 'image' ? imagePart(p, cc) : filePart(p, cc)));
}

function toolMessage(p: IrToolResult, cc: boolean): { tool: Obj; images: IrImage[] } {
  let content: string | Obj[];
  const images: IrImage[] = [];
  if (typeof p.content === 'string') content = cc && p.cache_control ? [{ type: 'text', text: p.content, cache_control: p.cache_control }] : p.content;
  else {
    const texts: IrText[] = [];
    for (const c of p.content) (c.type === 'text' ? texts : images).push(c as never);
    content = texts.length === 0 ? '' : textContent(texts, cc);
  }
  return { tool: { role: 'tool', tool_call_id: p.tool_call_id, content }, images };
}

/** OpenRouter-style `reasoning_details` of the reasoning parts of a message. */
export function reasoningDetails(parts: IrPart[]): Obj[] {
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'reasoning') {
      const index = out.length;
      if (p.summary) out.push({ type: 'reasoning.summary', summary: p.text, index });
      else out.push({ type: 'reasoning.text', text: p.text, ...(p.signature !== undefined ? { signature: p.signature } : {}), index });
    } else if (p.type === 'redacted_reasoning') out.push({ type: 'reasoning.encrypted', data: p.data, index: out.length });
  }
  return out;
}

function userMessages(m: IrMessage, cc: boolean): Obj[] {
  const out: Obj[] = [];
  let pending: Array<IrText | IrImage | IrDocument> = [];
  const flush = () => {
    if (pending.length === 0) return;
    const msg: Obj = { role: 'user', content: userContent(pending, cc) };
    if (m.name) msg.name = m.name;
    out.push(msg);
    pending = [];
  };
  for (const p of m.content) {
    if (p.type === 'tool_result') {
      flush();
      const { tool, images } = toolMessage(p, cc);
      out.push(tool);
      pending.push(...images);
    } else if (p.type === 'text' || p.type === 'image' || p.type === 'document') pending.push(p);
    // Other part types have no meaning on the user side of a chat and are skipped.
  }
  flush();
  if (m.content.length === 0) out.push(m.name ? { role: 'user', content: '', name: m.name } : { role: 'user', content: '' });
  return out;
}

function assistantMessage(m: IrMessage, cc: boolean, reasoningHistory: boolean): Obj {
  const texts: IrText[] = [];
  const refusals: string[] = [];
  const toolCalls: Obj[] = [];
  for (const p of m.content) {
    if (p.type === 'text') texts.push(p);
    else if (p.type === 'refusal') refusals.push(p.text);
    else if (p.type === 'tool_call') toolCalls.push({ id: p.id, type: 'function', function: { name: p.name, arguments: p.arguments } });
  }
  const msg: Obj = { role: 'assistant', content: texts.length === 0 ? null : cc && texts.some((t) => t.cache_control) ? textContent(texts, cc) : texts.map((t) => t.text).join('') };
  if (m.name) msg.name = m.name;
  if (refusals.length > 0) msg.refusal = refusals.join('');
  if (toolCalls.length > 0) msg.tool_calls = toolCalls;
  if (reasoningHistory) {
    const details = reasoningDetails(m.content);
    if (details.length > 0) {
      const text = m.content.flatMap((p) => (p.type === 'reasoning' ? [p.text] : [])).join('');
      if (text) msg.reasoning = text;
      msg.reasoning_details = details;
    }
  }
  if (msg.content === null && toolCalls.length === 0 && refusals.length === 0) msg.content = '';
  return msg;
}

/** The chat completions body of an IR request. */
export function buildChatBody(req: IrRequest, opts: ChatBodyOptions = {}): Obj {
  const cc = opts.cacheControl === true;
  const messages: Obj[] = [];
  if (req.system.length > 0) messages.push({ role: opts.systemRole ?? 'system', content: textContent(req.system, cc) });
  for (const m of req.messages) {
    if (m.role === 'user') messages.push(...userMessages(m, cc));
    else if (m.role === 'system') {
      // A mid-conversation system turn: a system (or developer) message in place.
      const texts = systemTexts(m);
      if (texts.length > 0) messages.push({ role: opts.systemRole ?? 'system', content: textContent(texts, cc) });
    } else messages.push(assistantMessage(m, cc, opts.reasoningHistory !== false));
  }
  const body: Obj = { model: req.model, messages };
  if (req.tools && req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const fn: Obj = { name: t.name };
      if (t.description !== undefined) fn.description = t.description;
      fn.parameters = t.parameters;
      if (t.strict !== undefined) fn.strict = t.strict;
      const tool: Obj = { type: 'function', function: fn };
      if (cc && t.cache_control) tool.cache_control = t.cache_control;
      return tool;
    });
  }
  if (req.tool_choice) {
    body.tool_choice = req.tool_choice.type === 'tool' ? { type: 'function', function: { name: req.tool_choice.name } } : req.tool_choice.type;
  }
  if (req.parallel_tool_calls !== undefined) body.parallel_tool_calls = req.parallel_tool_calls;
  if (req.max_tokens !== undefined) body[opts.legacyMaxTokens ? 'max_tokens' : 'max_completion_tokens'] = req.max_tokens;
  for (const k of ['temperature', 'top_p', 'top_k', 'frequency_penalty', 'presence_penalty', 'seed'] as const) {
    if (req[k] !== undefined) body[k] = req[k];
  }
  if (req.stop && req.stop.length > 0) body.stop = req.stop;
  const rf = req.response_format;
  if (rf) {
    if (rf.type === 'json_schema') {
      const js: Obj = { name: rf.name, schema: rf.schema };
      if (rf.strict !== undefined) js.strict = rf.strict;
      if (rf.description !== undefined) js.description = rf.description;
      body.response_format = { type: 'json_schema', json_schema: js };
    } else body.response_format = { type: rf.type };
  }
  const effort = openaiEffort(req);
  if (effort) body.reasoning_effort = effort;
  if (req.user !== undefined) body.user = req.user;
  if (req.modalities) body.modalities = req.modalities;
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
