/**
 * I/O logging (docs/observability.md), the pure part: whether a request is logged (the workspace's switch, its key
 * list and sampling rate), and the stored content built from what the request path kept — the client's body and
 * either the rendered answer or the client-bound stream text — in the hosted API's `GET /generation/content` shape.
 * Assembly runs at flush time, off the request path.
 */
import { keepBytes } from './lazy-body.js';

/** What a workspace says about I/O logging (its row's fields). */
export interface IoLogSettings {
  is_observability_io_logging_enabled: boolean;
  io_logging_sampling_rate: number;
  io_logging_api_key_ids: number[] | null;
}

/**
 * A key's numeric id (the integers `io_logging_api_key_ids` lists, shown as `id` by GET /keys): the first 52 bits of
 * its SHA-256 hash, a stable safe integer.
 */
export function keyNumericId(hash: string): number {
  return parseInt(hash.slice(0, 13), 16);
}

/** Whether this request's content is logged: the switch, the key list (null: all keys), then the sample. */
export function ioLogged(ws: IoLogSettings | null | undefined, keyHash: string, rng: () => number): boolean {
  if (!ws || !ws.is_observability_io_logging_enabled) return false;
  const ids = ws.io_logging_api_key_ids;
  if (ids && !ids.includes(keyNumericId(keyHash))) return false;
  const rate = ws.io_logging_sampling_rate;
  return rate >= 1 || rng() < rate;
}

/** The client API a capture is in (decides how its output is read). */
export type IoApi = 'chat' | 'responses' | 'messages' | 'gemini' | 'embeddings' | 'rerank' | 'other';

/**
 * What the request path keeps for a logged request: references only (the body it already has, the answer it
 * rendered, the stream text it wrote) — nothing is copied or parsed before the flush.
 */
export class IoCapture {
  /** Client-bound stream text, in order (streams). */
  readonly chunks: string[] = [];
  /** The rendered JSON answer (non-streamed). */
  answer: unknown = undefined;
  /** Every failed attempt's provider error, in order. */
  readonly failures: Array<{ code: number; message: string; provider_name: string | null; raw: string | null }> = [];

  constructor(
    readonly api: IoApi,
    readonly body: Record<string, unknown>,
  ) {
    // Its conversation is read at flush time, after the request is done: lent bytes must stay (core/lazy-body.ts).
    keepBytes(body);
  }

  /** A failed attempt (its gateway status, message, provider and raw upstream body). */
  failed(code: number, message: string, provider: string | null, raw: unknown): void {
    this.failures.push({ code, message, provider_name: provider, raw: raw === null || raw === undefined ? null : typeof raw === 'string' ? raw : JSON.stringify(raw) });
  }
}

export interface ToolCallOut {
  id: string | null;
  name: string;
  arguments: string;
}

/** `GET /generation/content`'s data (plus `tool_calls`, our extension). */
export interface GenerationContent {
  input: { messages: unknown[] } | { prompt: string };
  output: { completion: string | null; reasoning: string | null; tool_calls: ToolCallOut[] | null };
  error: {
    status: number | null;
    message: string | null;
    provider_name: string | null;
    raw: string | null;
    previous_errors: Array<{ code: number; message: string; provider_name: string | null; raw: string | null }>;
  } | null;
}

/** The request's input: its messages (chat and messages APIs with the system prompt first), else a prompt. */
export function inputOf(api: IoApi, body: Record<string, unknown>): GenerationContent['input'] {
  if (api === 'chat' && Array.isArray(body.messages)) return { messages: body.messages };
  if (api === 'messages' && Array.isArray(body.messages)) {
    return { messages: body.system !== undefined ? [{ role: 'system', content: body.system }, ...body.messages] : body.messages };
  }
  if (api === 'responses') {
    const msgs: unknown[] = [];
    if (typeof body.instructions === 'string') msgs.push({ role: 'system', content: body.instructions });
    if (typeof body.input === 'string') msgs.push({ role: 'user', content: body.input });
    else if (Array.isArray(body.input)) msgs.push(...body.input);
    return { messages: msgs };
  }
  if (api === 'gemini' && Array.isArray(body.contents)) {
    return { messages: body.systemInstruction !== undefined ? [{ role: 'system', ...(body.systemInstruction as object) }, ...body.contents] : body.contents };
  }
  if (api === 'rerank') return { prompt: typeof body.query === 'string' ? body.query : JSON.stringify(body.query ?? null) };
  const input = body.input ?? body.prompt;
  return { prompt: typeof input === 'string' ? input : JSON.stringify(input ?? null) };
}

/** Output being assembled. */
class Out {
  text = '';
  reasoning = '';
  tools: Array<{ id: string | null; name: string; arguments: string }> = [];
  sawText = false;
  sawReasoning = false;

  addText(t: unknown) {
    if (typeof t === 'string') (this.text += t), (this.sawText = true);
  }
  addReasoning(t: unknown) {
    if (typeof t === 'string') (this.reasoning += t), (this.sawReasoning = true);
  }
  tool(index: number, id: unknown, name: unknown, args: unknown) {
    const t = (this.tools[index] ??= { id: null, name: '', arguments: '' });
    if (typeof id === 'string') t.id = id;
    if (typeof name === 'string') t.name += name;
    if (typeof args === 'string') t.arguments += args;
    else if (args !== undefined && args !== null) t.arguments += JSON.stringify(args);
  }
  done(): GenerationContent['output'] {
    const tools = this.tools.filter(Boolean);
    return { completion: this.sawText ? this.text : null, reasoning: this.sawReasoning ? this.reasoning : null, tool_calls: tools.length > 0 ? tools : null };
  }
}

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Reads one answer object (or one stream event) of the client API into `out`. */
function readEvent(api: IoApi, e: J, out: Out, stream: boolean): void {
  if (api === 'chat') {
    for (const c of (e.choices as J[] | undefined) ?? []) {
      const m = (stream ? c.delta : c.message) as J | undefined;
      if (!m) continue;
      out.addText(m.content);
      out.addReasoning(m.reasoning ?? m.reasoning_content);
      for (const [i, t] of ((m.tool_calls as J[] | undefined) ?? []).entries()) out.tool(typeof t.index === 'number' ? t.index : i, t.id, t.function?.name, t.function?.arguments);
    }
  } else if (api === 'messages') {
    if (!stream) {
      for (const [i, b] of ((e.content as J[] | undefined) ?? []).entries()) readAnthropicBlock(b, i, out);
    } else if (e.type === 'content_block_start') readAnthropicBlock(e.content_block as J, e.index as number, out, true);
    else if (e.type === 'content_block_delta') {
      const d = e.delta as J;
      if (d.type === 'text_delta') out.addText(d.text);
      else if (d.type === 'thinking_delta') out.addReasoning(d.thinking);
      else if (d.type === 'input_json_delta') out.tool(e.index as number, undefined, undefined, d.partial_json);
    }
  } else if (api === 'responses') {
    if (!stream) for (const item of (e.output as J[] | undefined) ?? []) readResponsesItem(item, out);
    else if (e.type === 'response.output_text.delta') out.addText(e.delta);
    else if (e.type === 'response.reasoning_text.delta' || e.type === 'response.reasoning_summary_text.delta') out.addReasoning(e.delta);
    else if (e.type === 'response.output_item.done' && (e.item as J)?.type === 'function_call') readResponsesItem(e.item as J, out);
  } else if (api === 'gemini') {
    for (const c of (e.candidates as J[] | undefined) ?? []) {
      for (const p of ((c.content as J | undefined)?.parts as J[] | undefined) ?? []) {
        if (p.functionCall) out.tool(out.tools.length, null, p.functionCall.name, p.functionCall.args ?? {});
        else if (p.thought === true) out.addReasoning(p.text);
        else out.addText(p.text);
      }
    }
  }
}

function readAnthropicBlock(b: J, index: number, out: Out, start = false): void {
  if (!b) return;
  if (b.type === 'text') out.addText(b.text);
  else if (b.type === 'thinking') out.addReasoning(b.thinking);
  else if (b.type === 'tool_use') out.tool(index, b.id, b.name, start ? undefined : b.input);
}

function readResponsesItem(item: J, out: Out): void {
  if (item.type === 'message') for (const c of (item.content as J[] | undefined) ?? []) if (c.type === 'output_text') out.addText(c.text);
  if (item.type === 'reasoning') for (const s of (item.summary as J[] | undefined) ?? []) out.addReasoning(s.text);
  if (item.type === 'function_call') out.tool(out.tools.length, item.call_id ?? item.id, item.name, item.arguments);
}

/** The `data:` payloads of SSE text (comments and `event:` lines skipped). */
function* sseData(text: string): Generator<string> {
  for (const line of text.split('\n')) {
    if (line.startsWith('data:')) {
      const d = line.slice(line[5] === ' ' ? 6 : 5).trimEnd();
      if (d && d !== '[DONE]') yield d;
    }
  }
}

/** The output a capture holds: the rendered answer, or the stream text assembled. */
export function outputOf(cap: IoCapture): GenerationContent['output'] {
  const out = new Out();
  if (cap.answer !== undefined && cap.answer !== null) {
    if (cap.api !== 'embeddings' && cap.api !== 'rerank' && cap.api !== 'other') readEvent(cap.api, cap.answer as J, out, false);
    return out.done();
  }
  if (cap.chunks.length === 0) return out.done();
  const text = cap.chunks.join('');
  // Gemini's non-SSE stream is one JSON array.
  if (cap.api === 'gemini' && text.trimStart().startsWith('[')) {
    try {
      for (const e of JSON.parse(text) as J[]) readEvent('gemini', e, out, true);
      return out.done();
    } catch {
      // not complete JSON: read nothing
    }
  }
  for (const d of sseData(text)) {
    let e: J;
    try {
      e = JSON.parse(d) as J;
    } catch {
      continue;
    }
    readEvent(cap.api, e, out, true);
  }
  return out.done();
}

/** The stored content of a generation, capped at `maxBytes` (long strings cut, with a note). */
export function buildContent(cap: IoCapture, error: { status: number; message: string } | null, provider: string | null, maxBytes: number): GenerationContent {
  const failures = cap.failures;
  const last = failures.length > 0 ? failures[failures.length - 1] : null;
  const content: GenerationContent = {
    input: inputOf(cap.api, cap.body),
    output: outputOf(cap),
    error: error
      ? {
          status: error.status,
          message: error.message,
          provider_name: last?.provider_name ?? provider,
          raw: last?.raw ?? null,
          previous_errors: last ? failures.slice(0, -1) : [],
        }
      : null,
  };
  return capContent(content, maxBytes);
}

/** Cuts strings (longest first) until the JSON fits in `maxBytes`. */
export function capContent(c: GenerationContent, maxBytes: number): GenerationContent {
  let json = JSON.stringify(c);
  if (Buffer.byteLength(json) <= maxBytes) return c;
  // Over the cap: the input is kept as one truncated JSON string, and the output strings cut to share what remains.
  const half = Math.max(256, Math.floor(maxBytes / 4));
  const cut = (s: string | null) => (s !== null && s.length > half ? `${s.slice(0, half)}… [truncated]` : s);
  const inputJson = JSON.stringify(c.input);
  const out: GenerationContent = {
    input: inputJson.length > half ? { prompt: `${inputJson.slice(0, half)}… [truncated]` } : c.input,
    output: { completion: cut(c.output.completion), reasoning: cut(c.output.reasoning), tool_calls: c.output.tool_calls?.map((t) => ({ ...t, arguments: cut(t.arguments) ?? '' })) ?? null },
    error: c.error ? { ...c.error, raw: cut(c.error.raw), previous_errors: c.error.previous_errors.map((p) => ({ ...p, raw: cut(p.raw) })) } : null,
  };
  json = JSON.stringify(out);
  if (Buffer.byteLength(json) <= maxBytes) return out;
  return { input: { prompt: '[truncated]' }, output: { completion: cut(out.output.completion)?.slice(0, Math.floor(maxBytes / 8)) ?? null, reasoning: null, tool_calls: null }, error: out.error ? { ...out.error, raw: null, previous_errors: [] } : null };
}
