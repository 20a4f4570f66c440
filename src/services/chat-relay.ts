/**
 * The same-protocol stream relay (chat completions in, an OpenAI-protocol upstream): the upstream's bytes in, the
 * client's bytes out, with as little work per chunk as the job allows.
 *
 * An ordinary content chunk — one choice whose delta is non-empty text or a tool call's next arguments, no finish
 * reason, no usage, only inert fields besides, valid JSON — is relayed as our prefix (`data: {"id":…,"object":…,
 * "created":…,"model":…,"provider":…,`) followed by the rest of its bytes as read: not decoded, parsed,
 * re-serialized or re-encoded. A plain chunk is recognized by the strict patterns of providers/openai/chunk-scan.ts
 * (on the read's Latin-1 text) and kept as a template; the chunks after it that repeat its bytes around their delta
 * string are recognized by comparing those bytes and scanning the string (providers/openai/chunk-template.ts), with
 * no pattern and no search for the event's end. The reads are cut at their events by providers/sse-reads.ts (an event
 * cut by a read's end is completed from the next read's first bytes, as in the translated sessions). The output of
 * one read is written into one Buffer. Every other event (the role chunk, finish, usage, errors, reasoning, another
 * key order, comments, multi-line events) is found at its blank line, decoded and handled by `data` with
 * `JSON.parse`: a few per stream.
 *
 * A stream whose line ends are not LF (a CR anywhere: `\r\n` or `\r` ends, which JSON text cannot hold unescaped) is
 * read by `eventsource-parser` from then on, event by event, through the same handler. Bytes that are not UTF-8 take
 * the decoding path for their read (replacement characters, as the decoder gives them).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { carriesOutput, normalizeChoices } from '../core/chat-shape.js';
import type { AnswerMeta } from '../core/adapters.js';
import { UpstreamError } from '../core/provider-errors.js';
import { eventTooLarge, SseEventBound } from '../providers/sse.js';
import { SseReads } from '../providers/sse-reads.js';
import { openaiChatWire, type OpenAIUsage } from '../providers/registry.js';
import type { StreamSession } from './codec-types.js';
import { hasAt, plainChunkAt, plainChunkChars, type PlainChunk } from '../providers/openai/chunk-scan.js';
import { ChunkTemplate, OutBytes, type TemplateRun } from '../providers/openai/chunk-template.js';
import { chatUsageView } from './codec-usage.js';

const { streamError, tokenUsage, checkChunk: checkChatChunk } = openaiChatWire;

/** The fields every OpenAI chunk starts with, as OpenAI and most compatible servers serialize them. */
export function chunkPrefix(id: string, created: number, model: string, provider?: string): string {
  return `{"id":${JSON.stringify(id)},"object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},${provider === undefined ? '' : `"provider":${JSON.stringify(provider)},`}`;
}

// ---- counting output (cut streams) -------------------------------------------------------------------

/** Tokens of a delta of `chars` characters: a quarter, at least one (an output event carries at least one token). */
export const deltaTokens = (chars: number) => Math.max(1, Math.ceil(chars / 4));

/** Characters of output in OpenAI chunk choices: content, reasoning, refusal, tool-call arguments. */
function deltaChars(choices: unknown[]): number {
  let n = 0;
  for (const c of choices as Array<{ delta?: Record<string, unknown> | null }>) {
    const d = c?.delta;
    if (!d) continue;
    for (const k of ['content', 'reasoning', 'reasoning_content', 'refusal']) if (typeof d[k] === 'string') n += (d[k] as string).length;
    if (Array.isArray(d.tool_calls)) for (const t of d.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) n += String(t?.function?.arguments ?? '').length + String(t?.function?.name ?? '').length;
  }
  return n;
}

/**
 * OpenAI-compatible reasoning servers (DeepSeek, vLLM, …) return reasoning text as `reasoning_content`; the chat API
 * carries it as `reasoning` (as on the translated path). The upstream field is kept, `reasoning` is added beside it.
 */
export function mirrorReasoning(choices: unknown, key: 'message' | 'delta'): boolean {
  if (!Array.isArray(choices)) return false;
  let changed = false;
  for (const c of choices as Array<Record<string, unknown> | null>) {
    const m = c?.[key] as Record<string, unknown> | null | undefined;
    if (m && typeof m.reasoning_content === 'string' && (m.reasoning === undefined || m.reasoning === null)) {
      m.reasoning = m.reasoning_content;
      changed = true;
    }
  }
  return changed;
}

// ---- the session -------------------------------------------------------------------------------------

const DATA = 'data: ';
const DONE = '[DONE]';
/** The end of an event (as a Buffer: searched for in the bytes). */
const LFLF = Buffer.from('\n\n');
/** UTF-8 text as Latin-1 text of its bytes (how the reads are scanned): the same text when it is ASCII. */
const latin1 = (s: string, ascii: boolean) => (s === '' || ascii ? s : Buffer.from(s).toString('latin1'));
/** The text of the read's bytes from `s` to `e` (`buf`, their Latin-1 text: a slice of it when the read is ASCII). */
const textOf = (buf: string, bytes: Buffer, s: number, e: number, ascii: boolean) => (ascii ? buf.slice(s, e) : bytes.toString('utf8', s, e));
/** Whether strings (ids, names; a few dozen characters) are ASCII. */
function asciiText(a: string, b: string): boolean {
  let bits = 0;
  for (let i = 0; i < a.length; i++) bits |= a.charCodeAt(i);
  for (let i = 0; i < b.length; i++) bits |= b.charCodeAt(i);
  return bits < 0x80;
}

/** The fields every chunk of ours starts with. */
interface ChunkBase {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  provider: string | undefined;
}

/**
 * Our final chunk's fields: the base, `choices` and `usage`, in this order. Explicit literals (here and in errorOut):
 * on this V8 each property added after an object spread costs about a microsecond (a map transition that is not
 * cached), and these run once per streamed answer.
 */
function ourChunk(b: ChunkBase, choices: unknown[], usage: unknown): Record<string, unknown> {
  return { id: b.id, object: b.object, created: b.created, model: b.model, provider: b.provider, choices, usage };
}

/** Where the parts of the plain chunk just matched are (push is synchronous: one for every relay). */
const at: PlainChunk = { delta: 0, deltaEnd: 0, tail: 0 };
/** What a template run relayed (the same). */
const matched: TemplateRun = { chunks: 0, tokens: 0 };

/** The chat relay of one attempt (see the file comment). */
export function chatRelay(meta: AnswerMeta): StreamSession {
  return new ChatRelay(meta);
}

class ChatRelay implements StreamSession {
  readonly binary = true;
  contentStarted = false;
  failure: UpstreamError | null = null;
  producedTokens = 0;
  finish: string | null = null;
  native: string | null = null;
  upstreamId: string | null = null;

  private done = false;
  private raw: OpenAIUsage | null = null;
  /** Chunks without output (the opening role-only one) are held until output flows: a failure before then may still fall back. */
  private held = '';
  private readonly base: ChunkBase;
  /** Most chunks need only their id, created and model replaced and the provider added (see chunkPrefix). */
  private readonly ourPrefix: string;
  /** `data: ` and our prefix, as bytes. */
  private readonly ourData: Buffer;
  /** `data: ` and the upstream's usual prefix, as Latin-1 text of their UTF-8 bytes (as the reads are scanned). */
  private upstreamData: string | null = null;
  private upstreamText: string | null = null;
  /** The last plain chunk recognized by the patterns, as the template of the next ones (chunk-template.ts). */
  private template: ChunkTemplate | null = null;
  /** The reads cut at their events (an event cut by a read's end is carried to the next). */
  private readonly reads = new SseReads(0);
  /** CR line ends seen: `eventsource-parser` reads the rest of the stream. */
  private legacy: { parser: ReturnType<typeof createParser>; events: EventSourceMessage[]; decoder: StringDecoder; bound: SseEventBound } | null = null;

  constructor(private readonly meta: AnswerMeta) {
    this.base = { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, provider: meta.provider };
    this.ourPrefix = chunkPrefix(meta.id, meta.created, meta.model, meta.provider);
    this.ourData = Buffer.from(`data: ${this.ourPrefix}`);
  }

  push(input: string | Uint8Array): Buffer | string {
    const chunk = typeof input === 'string' ? Buffer.from(input) : Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    if (this.done) return '';
    if (this.legacy === null && chunk.indexOf(0x0d) !== -1) this.toLegacy();
    if (this.legacy !== null) return this.pushLegacy(chunk);
    const reads = this.reads;
    reads.cut(chunk);
    const head = reads.head;
    const body = reads.body;
    const tpl = this.template;
    const out = new OutBytes(Math.ceil((body.length + (head === null ? 0 : head.length)) * (tpl === null ? 1.25 : tpl.growth)) + (tpl === null ? 64 : 64 + tpl.slack));
    try {
      // The event the last read cut is read on its own (the read is not copied behind it); the rest of the read follows.
      if (head !== null) this.scan(head, out);
      if (!this.done && body.length > 0) this.scan(body, out);
      // An event past the bound fails the stream after the read's complete events went out.
      if (!this.done && reads.tooLarge) throw eventTooLarge();
    } catch (err) {
      if (out.pos === 0) throw err;
      this.failure = err as UpstreamError;
    }
    return out.result();
  }

  /**
   * The complete events of `bytes` (from an event's start to a blank line's end; providers/sse-reads.ts), output to
   * `out`. Chunks like the last plain one are compared with it in the bytes (chunk-template.ts); any other
   * event is read in the bytes' Latin-1 text (one character per byte, a copy without decoding), which the patterns
   * and comparisons scan.
   */
  private scan(bytes: Buffer, out: OutBytes): void {
    const ascii = isAscii(bytes);
    let tpl = this.template;
    // The Latin-1 text of the bytes (a copy without decoding): the template compares its fixed parts in it, the
    // patterns run on it.
    const buf = bytes.toString('latin1');
    let pos = 0;
    // Bytes that are not UTF-8 are decoded (with replacement characters) rather than relayed.
    const utf8 = ascii || isUtf8(bytes);
    const n = bytes.length;
    const m = matched;
    while (!this.done) {
      if (utf8 && tpl !== null) {
        for (let e = tpl.run(bytes, buf, pos, out, m); e !== -1; e = tpl.run(bytes, buf, pos, out, m)) {
          this.producedTokens += m.tokens;
          pos = e;
        }
      }
      const nn = pos >= n - 1 ? -1 : bytes.indexOf(LFLF, pos);
      if (nn === -1) break;
      this.event(buf, bytes, pos, nn, ascii, utf8, out);
      tpl = this.template;
      pos = nn + 2;
    }
  }

  /** One event of the read, from `s` to its blank line at `nn`, by the patterns or by parsing it; its output to `out`. */
  private event(buf: string, bytes: Buffer, s: number, nn: number, ascii: boolean, utf8: boolean, out: OutBytes): void {
    while (s < nn && buf.charCodeAt(s) === 0x0a) s++; // blank lines beyond the first
    if (s === nn) return;
    // A plain chunk: `data: ` and the upstream's usual prefix (one comparison), then its patterns, which admit no line
    // break (the event is this one line). Relayed as our prefix, the rest up to its tail, and `}`; the template of the
    // next ones.
    const upData = this.upstreamData;
    if (utf8 && upData !== null && hasAt(buf, s, upData) && plainChunkAt(buf, s + upData.length, at)) {
      this.contentStarted = true;
      this.producedTokens += deltaTokens(plainChunkChars(buf, at));
      if (this.held !== '') out.text(this.takeHeld());
      out.bytes(this.ourData, 0, this.ourData.length);
      out.bytes(bytes, s + upData.length, at.tail);
      out.text('}\n\n');
      this.template = new ChunkTemplate(bytes, buf, s, nn + 2, at, this.ourData, upData.length);
      return;
    }
    if (hasAt(buf, s, DATA)) {
      const d = s + DATA.length;
      if (buf.indexOf('\n', s) === nn) {
        if (nn - d === DONE.length && hasAt(buf, d, DONE)) {
          this.done = true;
          return;
        }
        out.text(this.data(textOf(buf, bytes, d, nn, ascii)));
        return;
      }
    }
    if (buf.charCodeAt(s) !== 0x3a || buf.indexOf('\n', s) !== nn) {
      // Anything but a one-line comment: an event of other fields (`event:`, several `data:` lines, `id:`).
      for (const ev of parseEvents(textOf(buf, bytes, s, nn + 2, ascii))) {
        if (ev.data === '[DONE]') {
          this.done = true;
          return;
        }
        out.text(this.data(ev.data));
      }
    }
  }

  private takeHeld(): string {
    const h = this.held;
    this.held = '';
    return h;
  }

  private toLegacy(): void {
    const events: EventSourceMessage[] = [];
    this.legacy = { parser: createParser({ onEvent: (ev) => events.push(ev) }), events, decoder: new StringDecoder('utf8'), bound: new SseEventBound() };
    const carry = this.reads.take();
    if (carry) this.legacy.parser.feed(this.legacy.decoder.write(carry));
  }

  private pushLegacy(chunk: Buffer): string {
    const { parser, events, decoder, bound } = this.legacy!;
    const text = decoder.write(chunk);
    parser.feed(text);
    let out = '';
    try {
      bound.fed(text.length, events.length);
      for (const ev of events) {
        if (this.done) break;
        if (ev.data === '[DONE]') {
          this.done = true;
          break;
        }
        out += this.data(ev.data);
      }
    } catch (err) {
      if (out === '') throw err;
      this.failure = err as UpstreamError;
    } finally {
      events.length = 0;
    }
    return out;
  }

  /** One event's data by parsing it: the client's line (with any held lines before it), or '' (held or folded). */
  private data(data: string): string {
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(data) as Record<string, unknown>;
    } catch {
      throw new UpstreamError(502, 'Provider sent an invalid stream event', 'provider_unavailable', 200, data.slice(0, 512));
    }
    if (json.error) throw streamError(json as { error?: { message?: string } });
    checkChatChunk(json);
    // Usage (or OpenAI's `usage: null` on every other chunk) goes only on the gateway's final chunk.
    const withUsage = json.usage !== undefined;
    if (withUsage) {
      if (json.usage) this.raw = json.usage as OpenAIUsage;
      delete json.usage;
    }
    if (typeof json.id === 'string') this.upstreamId = json.id;
    const choices = json.choices;
    if (!Array.isArray(choices) || choices.length === 0) return ''; // usage-only chunk: folded into the final one
    const fin = (choices as Array<{ finish_reason?: string | null }>).find((c) => c.finish_reason)?.finish_reason;
    if (fin) this.native = fin;
    const mirrored = mirrorReasoning(choices, 'delta');
    const output = carriesOutput(choices);
    if (output) this.producedTokens += deltaTokens(deltaChars(choices));
    const norm = normalizeChoices(choices);
    if (norm) this.finish = norm;
    if (this.upstreamText === null && typeof json.id === 'string' && typeof json.created === 'number' && typeof json.model === 'string') {
      this.upstreamText = chunkPrefix(json.id, json.created, json.model);
      const upData = `data: ${this.upstreamText}`;
      this.upstreamData = latin1(upData, asciiText(json.id, json.model));
    }
    const up = this.upstreamText;
    const verbatim = norm === null && !mirrored && !withUsage && json.provider === undefined && up !== null && data.startsWith(up);
    const line = verbatim ? `data: ${this.ourPrefix}${data.slice(up!.length)}\n\n` : `data: ${JSON.stringify(Object.assign(json, this.base))}\n\n`;
    if (!this.contentStarted && !output) {
      this.held += line;
      return '';
    }
    this.contentStarted = true;
    return this.takeHeld() + line;
  }

  end(): string {
    if (!this.done) throw new UpstreamError(502, 'Provider stream ended before completion', 'provider_unavailable', 200, null);
    return '';
  }

  finishOut(m: AnswerMeta): string {
    const tail: Record<string, unknown> = ourChunk(this.base, [], chatUsageView(tokenUsage(this.raw), this.raw, m));
    if (m.gateway_metadata) tail.gateway_metadata = m.gateway_metadata;
    return `${this.takeHeld()}data: ${JSON.stringify(tail)}\n\ndata: [DONE]\n\n`;
  }

  errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
    const b = this.base;
    const chunk: Record<string, unknown> = {
      id: b.id,
      object: b.object,
      created: b.created,
      model: b.model,
      provider: b.provider,
      error: { code: status, message, metadata: { error_type: errorType } },
      choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }],
    };
    if (m.gateway_metadata) chunk.gateway_metadata = m.gateway_metadata;
    return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
  }

  usage() {
    return tokenUsage(this.raw);
  }
}

/** The events of one complete block of event-stream text (an event of several fields, `\n\n`-terminated). */
function parseEvents(text: string): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (ev) => events.push(ev) }).feed(text);
  return events;
}
