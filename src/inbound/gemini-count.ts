/**
 * `:countTokens` of the Gemini skin: its body (`contents` and the rest of a GenerateContentRequest, directly or as
 * `generateContentRequest`) as the Messages body that the token-counting service counts (services/count-tokens.ts),
 * through the IR: Gemini body → IR → Anthropic Messages shape. Each provider's counter then translates it to its own
 * counting API as it does for POST /messages/count_tokens, so counts are exact or refused, never estimated.
 */
import { toMessages } from '../providers/anthropic/request.js';
import { isObject, type Json } from './common.js';
import { geminiToIr } from './gemini.js';

export function geminiCountBody(body: Json): Json {
  const source = isObject(body.generateContentRequest) ? body.generateContentRequest : body;
  const ir = geminiToIr({ ...source, stream: false });
  const out: Json = { messages: toMessages(ir.messages) };
  if (ir.system.length > 0) out.system = ir.system.map((t) => ({ type: 'text', text: t.text }));
  if (ir.tools && ir.tools.length > 0) out.tools = ir.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), input_schema: t.parameters }));
  return out;
}
