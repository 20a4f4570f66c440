/**
 * Server tools on the Responses and Messages APIs (docs/server-tools.md): the request goes through the internal
 * representation to the chat body the loop runs (services/server-tools.ts), and the loop's answer — a chat
 * completion — comes back through it in the client's API: its response body, or its event stream.
 *
 * Anthropic's `web_search_20250305` tool (Claude Code's web search) is the gateway's web search; its `max_uses`
 * bounds the calls as `max_tool_calls` does. The Messages answer reports the searches in Anthropic's own
 * `usage.server_tool_use.web_search_requests`; both APIs also carry `usage.server_tool_use_details` (streamed too:
 * the counts ride on the answer's metadata, `AnswerMeta.server_tools`).
 */
import type { IrPart, IrStreamEvent } from '../core/ir.js';
import { MAX_SERVER_TOOL_CALLS } from '../core/server-tools.js';
import type { HttpError } from '../core/errors.js';
import { openaiChatWire } from '../providers/registry.js';

const { buildBody: buildChatBody, parseAnswer: parseChatResponse } = openaiChatWire;
import { unpricedCostDetails, type AnswerMeta } from '../core/adapters.js';
import { INBOUND, type InboundApi } from './codecs.js';
import type { AnswerEncoder, FoundServerTool, ServerToolDetails } from './server-tools.js';

type Json = Record<string, unknown>;

/** Fields of a request that steer the gateway (routing, presets, records) or the loop: carried over as they are. */
const CARRIED = ['model', 'models', 'provider', 'route', 'preset', 'session_id', 'metadata', 'trace', 'plugins', 'stop_server_tools_when', 'max_tool_calls'] as const;

/** The chat body the loop runs for a Responses or Messages request with server tools. */
export function chatBodyOf(api: Exclude<InboundApi, 'chat'>, body: Json, server: FoundServerTool[]): Json {
  const ir = INBOUND[api].toIr(body); // server tools are left out of the IR's tools
  const chat = buildChatBody({ ...ir, model: typeof body.model === 'string' ? body.model : '', stream: false });
  delete chat.model;
  for (const k of CARRIED) if (body[k] !== undefined) chat[k] = body[k];
  chat.tools = [...((chat.tools as Json[] | undefined) ?? []), ...server.map((s) => ({ type: s.type, parameters: s.parameters }))];
  // Anthropic's web search tool: `max_uses` bounds its calls.
  const maxUses = server.map((s) => s.raw.max_uses).find((v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1);
  if (maxUses !== undefined && chat.max_tool_calls === undefined) chat.max_tool_calls = Math.min(maxUses, MAX_SERVER_TOOL_CALLS);
  return chat;
}

/** The loop's answer (a chat completion) in the internal representation, with what the client's API needs around it. */
function irOf(chatAnswer: Json, details: ServerToolDetails): { res: ReturnType<typeof parseChatResponse>; meta: AnswerMeta } {
  const res = parseChatResponse(JSON.stringify(chatAnswer));
  const usage = (chatAnswer.usage as Json | undefined) ?? {};
  const meta: AnswerMeta = {
    id: String(chatAnswer.id),
    model: String(chatAnswer.model),
    provider: typeof chatAnswer.provider === 'string' ? chatAnswer.provider : '',
    created: typeof chatAnswer.created === 'number' ? chatAnswer.created : Math.floor(Date.now() / 1000),
    cost: typeof usage.cost === 'number' ? usage.cost : null,
    cost_details: (usage.cost_details as AnswerMeta['cost_details'] | undefined) ?? unpricedCostDetails(),
    server_tools: details,
  };
  if (chatAnswer.gateway_metadata) meta.gateway_metadata = chatAnswer.gateway_metadata as Json;
  return { res, meta };
}

/** The loop's answer as the API's response body. */
export function answerBodyOf(api: Exclude<InboundApi, 'chat'>, chatAnswer: Json, details: ServerToolDetails): Json {
  const { res, meta } = irOf(chatAnswer, details);
  return INBOUND[api].fromIr(res, meta);
}

/** The IR events that replay a whole answer: its parts in order, its finish and its usage. */
function eventsOf(res: ReturnType<typeof parseChatResponse>): IrStreamEvent[] {
  const events: IrStreamEvent[] = [{ type: 'start', id: res.id, model: res.model }];
  res.content.forEach((p: IrPart, index) => {
    switch (p.type) {
      case 'text':
        events.push({ type: 'text_delta', index, text: p.text });
        break;
      case 'reasoning':
        events.push({ type: 'reasoning_delta', index, text: p.text });
        if (p.signature) events.push({ type: 'reasoning_signature', index, signature: p.signature });
        break;
      case 'redacted_reasoning':
        events.push({ type: 'redacted_reasoning', index, data: p.data });
        break;
      case 'refusal':
        events.push({ type: 'refusal_delta', index, text: p.text });
        break;
      case 'tool_call':
        events.push({ type: 'tool_call_start', index, id: p.id, name: p.name }, { type: 'tool_call_delta', index, arguments: p.arguments });
        break;
      case 'image':
        // An image made by gateway:image_generation: one event, a part of its own (no part_end).
        if (p.data) events.push({ type: 'image', index, data: p.data, media_type: p.media_type ?? 'image/png' });
        return;
      default:
        return;
    }
    events.push({ type: 'part_end', index });
  });
  events.push({ type: 'finish', finish_reason: res.finish_reason, native_finish_reason: res.native_finish_reason });
  if (res.usage) events.push({ type: 'usage', usage: res.usage });
  return events;
}

/** How the loop's answer is sent as the API's event stream. */
export function encoderOf(api: Exclude<InboundApi, 'chat'>): AnswerEncoder {
  return {
    answer: (chatAnswer, details) => {
      const { res, meta } = irOf(chatAnswer, details);
      const enc = INBOUND[api].createStreamEncoder(meta);
      let out = enc.start();
      for (const ev of eventsOf(res)) out += enc.event(ev);
      return out + enc.finish(res.usage, meta);
    },
    error: (e: HttpError, body, created) => {
      const meta: AnswerMeta = {
        id: '',
        model: typeof body.model === 'string' ? body.model : '',
        provider: '',
        created,
        cost: null,
        cost_details: unpricedCostDetails(),
      };
      return INBOUND[api].createStreamEncoder(meta).error(e.status, e.message, String(e.metadata?.error_type ?? 'server'), meta);
    },
  };
}
