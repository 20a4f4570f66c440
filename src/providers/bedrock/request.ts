/**
 * IR request → Amazon Bedrock Converse request (`POST {runtime}/model/{modelId}/converse` or `/converse-stream`;
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html).
 *
 * Choices, where Converse has no IR equivalent:
 * - System turns before the first user/assistant turn join `system`; later ones become user text (core/system-turns).
 *   Consecutive turns of the same role are merged (Converse requires alternating roles).
 * - Images must be inline (`source.bytes`): data URLs and base64 parts are sent, http(s) URLs are refused (400).
 * - `cache_control` marks become `cachePoint` blocks after the marked block.
 * - Reasoning: Anthropic models get `additionalModelRequestFields.thinking` (budget from `reasoning.max_tokens` or the
 *   effort; ≥ 1024, below maxTokens), Amazon Nova models `reasoningConfig`; other models reason on their own or not.
 *   Reasoning without a signature (from another provider) is not replayed.
 * - JSON schema answers use `outputConfig.textFormat` (json_schema; the schema as a JSON string); `json_object` asks
 *   for JSON in the system prompt.
 * - `tool_choice: none` keeps the tools (Converse needs them to read tool blocks in the history) without a choice.
 * - Not carried: frequency/presence penalty, seed, message `name`, image `detail`; `top_k` goes to
 *   `additionalModelRequestFields`.
 */
import type { UpstreamContext } from '../../core/adapters.js';
import { toolArgsObject, type CacheControl, type IrDocument, type IrImage, type IrMessage, type IrPart, type IrRequest, type IrText } from '../../core/ir.js';
import { UpstreamError } from '../../core/provider-errors.js';
import { withoutSystemTurns } from '../../core/system-turns.js';

type Obj = Record<string, unknown>;

export const DEFAULT_MAX_TOKENS = 4096;
const MIN_THINKING_BUDGET = 1024;
const EFFORT_BUDGET: Record<string, number> = { minimal: 1024, low: 2048, medium: 4096, high: 16384, xhigh: 32768, max: 65536 };
const NOVA_EFFORT: Record<string, string> = { minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high', max: 'high' };
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

const invalid = (message: string) => new UpstreamError(400, message, 'invalid_request', null, null);

function cachePoint(c: CacheControl | undefined): Obj[] {
  return c ? [{ cachePoint: { type: 'default' } }] : [];
}

function imageBlock(p: IrImage): Obj {
  let data = p.data;
  let type = p.media_type;
  if (!data && p.url) {
    const m = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(p.url);
    if (!m) throw invalid('Amazon Bedrock takes images inline only (base64 or a data: URL), not by URL');
    type = m[1] || type;
    data = m[2].replace(/\s+/g, '');
  }
  const format = IMAGE_FORMATS[(type ?? '').toLowerCase()] ?? sniff(data ?? '');
  return { image: { format, source: { bytes: data } } };
}

/** Converse's document formats by media type. */
const DOCUMENT_FORMATS: Record<string, string> = {
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.ms-excel': 'xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'text/html': 'html',
  'text/plain': 'txt',
  'text/markdown': 'md',
};

/**
 * A document → a Converse `document` block (`format` from the media type, bytes inline). Its `name` allows letters,
 * digits, single spaces, hyphens, parentheses and square brackets only: other characters become hyphens.
 */
export function documentBlock(p: IrDocument): Obj {
  let data = p.data;
  let type = p.media_type;
  if (data === undefined && p.url) {
    const m = /^data:([^;,]*)(?:;[^,]*)?;base64,(.*)$/s.exec(p.url);
    if (m) {
      type = m[1] || type;
      data = m[2].replace(/\s+/g, '');
    }
  }
  if (data === undefined) throw invalid('Amazon Bedrock takes documents inline only (base64 or a data: URL), not by URL or file id');
  const format = DOCUMENT_FORMATS[(type ?? 'application/pdf').toLowerCase()];
  if (!format) throw invalid(`Amazon Bedrock does not read documents of type ${type}`);
  const name = (p.filename ?? 'document').replace(/[^A-Za-z0-9\s\-()[\]]/g, '-').replace(/\s+/g, ' ').trim() || 'document';
  return { document: { format, name, source: { bytes: data } } };
}

function sniff(b64: string): string {
  if (b64.startsWith('/9j/')) return 'jpeg';
  if (b64.startsWith('R0lGOD')) return 'gif';
  if (b64.startsWith('UklGR')) return 'webp';
  return 'png';
}

function textBlocks(parts: Array<IrText | IrImage>): Obj[] {
  const out: Obj[] = [];
  for (const p of parts) {
    if (p.type === 'text') {
      if (p.text !== '') out.push({ text: p.text });
    } else out.push(imageBlock(p));
  }
  return out;
}

function block(p: IrPart): Obj[] {
  switch (p.type) {
    case 'text':
      return p.text === '' ? [] : [{ text: p.text }, ...cachePoint(p.cache_control)];
    case 'image':
      return [imageBlock(p), ...cachePoint(p.cache_control)];
    case 'document':
      return [documentBlock(p), ...cachePoint(p.cache_control)];
    case 'refusal':
      return p.text === '' ? [] : [{ text: p.text }];
    case 'tool_call':
      return [{ toolUse: { toolUseId: p.id, name: p.name, input: toolArgsObject(p.arguments) } }];
    case 'tool_result': {
      const content = typeof p.content === 'string' ? [{ text: p.content || ' ' }] : textBlocks(p.content);
      return [{ toolResult: { toolUseId: p.tool_call_id, content: content.length > 0 ? content : [{ text: ' ' }], ...(p.is_error ? { status: 'error' } : {}) } }, ...cachePoint(p.cache_control)];
    }
    case 'reasoning':
      return p.signature && !p.summary ? [{ reasoningContent: { reasoningText: { text: p.text, signature: p.signature } } }] : [];
    case 'redacted_reasoning':
      return [{ reasoningContent: { redactedContent: p.data } }];
  }
}

/** Converse messages: user/assistant turns, consecutive ones of a role merged, empty ones left out. */
export function converseMessages(messages: IrMessage[]): Obj[] {
  const out: Array<{ role: string; content: Obj[] }> = [];
  for (const m of messages) {
    const content = m.content.flatMap(block);
    if (content.length === 0) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === m.role) prev.content.push(...content);
    else out.push({ role: m.role, content });
  }
  return out;
}

function isAnthropic(modelId: string): boolean {
  return /(^|[.:/])anthropic\.|claude/i.test(modelId);
}

function reasoningFields(req: IrRequest, modelId: string, maxTokens: number): { fields: Obj; maxTokens: number } {
  const r = req.reasoning;
  const on = r && r.effort !== 'none' && r.enabled !== false && (r.enabled === true || r.effort !== undefined || r.max_tokens !== undefined);
  if (!on) return { fields: {}, maxTokens };
  if (isAnthropic(modelId)) {
    const forced = req.tool_choice?.type === 'required' || req.tool_choice?.type === 'tool';
    const budget = Math.max(MIN_THINKING_BUDGET, r.max_tokens ?? EFFORT_BUDGET[r.effort ?? 'medium'] ?? 4096);
    if (forced) return { fields: {}, maxTokens };
    return { fields: { thinking: { type: 'enabled', budget_tokens: budget } }, maxTokens: req.max_tokens === undefined ? Math.max(maxTokens, budget + DEFAULT_MAX_TOKENS) : Math.max(maxTokens, budget + 1) };
  }
  if (/(^|[.:/])amazon\.nova/i.test(modelId)) return { fields: { reasoningConfig: { type: 'enabled', maxReasoningEffort: NOVA_EFFORT[r.effort ?? 'medium'] ?? 'medium' } }, maxTokens };
  return { fields: {}, maxTokens };
}

/** The Converse body of an IR request for one endpoint. */
export function buildConverseBody(req: IrRequest, ctx: UpstreamContext): Obj {
  const { system, messages } = withoutSystemTurns(req.messages);
  const body: Obj = { messages: converseMessages(messages) };
  const sys: Obj[] = [];
  for (const t of [...req.system, ...system]) if (t.text !== '') sys.push({ text: t.text }, ...cachePoint(t.cache_control));
  if (req.response_format?.type === 'json_object') sys.push({ text: 'Answer with a single JSON object and nothing else.' });
  if (sys.length > 0) body.system = sys;

  const modelId = ctx.endpoint.upstreamModel;
  const { fields, maxTokens } = reasoningFields(req, modelId, req.max_tokens ?? ctx.endpoint.max_completion_tokens ?? DEFAULT_MAX_TOKENS);
  const inference: Obj = { maxTokens };
  if (req.temperature !== undefined && !fields.thinking) inference.temperature = Math.min(1, req.temperature);
  if (req.top_p !== undefined && !fields.thinking) inference.topP = req.top_p;
  if (req.stop && req.stop.length > 0) inference.stopSequences = req.stop;
  body.inferenceConfig = inference;

  if (req.tools && req.tools.length > 0) {
    const tools: Obj[] = req.tools.map((t) => ({ toolSpec: { name: t.name, ...(t.description ? { description: t.description } : {}), inputSchema: { json: t.parameters }, ...(t.strict ? { strict: true } : {}) } }));
    const c = req.tool_choice;
    const choice = c?.type === 'required' ? { any: {} } : c?.type === 'tool' ? { tool: { name: c.name } } : c?.type === 'auto' ? { auto: {} } : undefined;
    body.toolConfig = choice ? { tools, toolChoice: choice } : { tools };
  }
  if (req.response_format?.type === 'json_schema') {
    const f = req.response_format;
    body.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(f.schema), name: f.name, ...(f.description ? { description: f.description } : {}) } } } };
  }
  const extra: Obj = { ...fields };
  if (req.top_k !== undefined && !fields.thinking) extra.top_k = req.top_k;
  if (Object.keys(extra).length > 0) body.additionalModelRequestFields = extra;
  return body;
}

/** The runtime URL of a model call: `…/model/{modelId}/converse[-stream]` (the id escaped: Bedrock ids hold `:`). */
export function converseUrl(baseUrl: string, modelId: string, stream: boolean): URL {
  return new URL(`${baseUrl}/model/${encodeURIComponent(modelId)}/${stream ? 'converse-stream' : 'converse'}`);
}
