/** OpenAI chat completion answer → IR response (ir-upstream.ts's parseResponse). */
import { checkChatResponse } from './schemas.js';
import type { IrPart, IrResponse } from '../../core/ir.js';
import { streamError } from './chat.js';
import { generatedImages, irFinish, irUsageFromOpenAI, invalidResponse, isObj, parseJsonObject, str, type Obj } from './ir-shared.js';

// ------------------------------------------------------------------------------------------------ chat answer → IR

/** IR parts of `reasoning_details` entries (OpenRouter format). */
function partsOfDetails(details: unknown[]): IrPart[] {
  const out: IrPart[] = [];
  for (const d of details) {
    if (!isObj(d)) continue;
    if (d.type === 'reasoning.text') {
      const part: IrPart = { type: 'reasoning', text: str(d.text) ?? '' };
      if (typeof d.signature === 'string') part.signature = d.signature;
      out.push(part);
    } else if (d.type === 'reasoning.summary') out.push({ type: 'reasoning', text: str(d.summary) ?? '', summary: true });
    else if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') out.push({ type: 'redacted_reasoning', data: d.data });
  }
  return out;
}

/** Text of a `content` that some compatible servers send as an array of parts. */
export function contentText(c: unknown): string {
  if (typeof c === 'string') return c;
  if (!Array.isArray(c)) return '';
  return c.map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

export function argsText(a: unknown): string {
  if (typeof a === 'string') return a;
  return a === undefined || a === null ? '' : JSON.stringify(a);
}

/** A 2xx chat completion body as an IR response; throws UpstreamError for an error body or an invalid answer. */
export function parseChatResponse(text: string): IrResponse {
  const body = parseJsonObject(text);
  if (!Array.isArray(body.choices)) {
    if (body.error) throw streamError(body as { error?: { message?: string } });
    throw invalidResponse('Provider returned an invalid response (no choices)', body);
  }
  const json = checkChatResponse(body) as Obj & { choices: unknown[] };
  const choice = json.choices.find((c) => isObj(c) && (c.index === 0 || c.index === undefined)) ?? json.choices[0];
  if (!isObj(choice)) throw invalidResponse('Provider returned an invalid response (no choices)', json);
  const msg = isObj(choice.message) ? choice.message : {};
  const content: IrPart[] = [];
  if (Array.isArray(msg.reasoning_details) && msg.reasoning_details.length > 0) content.push(...partsOfDetails(msg.reasoning_details));
  else {
    const r = str(msg.reasoning) ?? str(msg.reasoning_content);
    if (r) content.push({ type: 'reasoning', text: r });
  }
  const t = contentText(msg.content);
  if (t) content.push({ type: 'text', text: t });
  if (typeof msg.refusal === 'string' && msg.refusal) content.push({ type: 'refusal', text: msg.refusal });
  content.push(...generatedImages(msg.images));
  let calls = 0;
  if (Array.isArray(msg.tool_calls)) {
    for (const tc of msg.tool_calls) {
      if (!isObj(tc)) continue;
      const fn = isObj(tc.function) ? tc.function : {};
      content.push({ type: 'tool_call', id: str(tc.id) ?? `call_${calls}`, name: str(fn.name) ?? '', arguments: argsText(fn.arguments) });
      calls++;
    }
  } else if (isObj(msg.function_call)) {
    content.push({ type: 'tool_call', id: 'call_0', name: str(msg.function_call.name) ?? '', arguments: argsText(msg.function_call.arguments) });
    calls++;
  }
  const native = choice.finish_reason;
  return {
    id: str(json.id) ?? null,
    model: str(json.model) ?? null,
    content,
    finish_reason: irFinish(native, calls > 0),
    native_finish_reason: typeof native === 'string' ? native : null,
    usage: irUsageFromOpenAI(json.usage),
    service_tier: str(json.service_tier) ?? null,
    system_fingerprint: str(json.system_fingerprint) ?? null,
  };
}
