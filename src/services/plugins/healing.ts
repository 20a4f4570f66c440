/**
 * The `response-healing` plugin (docs/plugins.md): a non-streamed reply to a request with `response_format`
 * json_object or json_schema whose text is not valid JSON is repaired (jsonrepair: unquoted keys, trailing commas,
 * single quotes, truncated structures, code fences, …), then checked against the schema (json_schema); the repaired
 * text replaces the reply's, and what was done goes to gateway_metadata.pipeline. Replies that parse are left alone.
 * Streams (StreamHealer): deltas are relayed as they come; at the end of each text part the whole text is healed, and
 * when the repair only appends (a truncated structure: closing quotes, brackets, braces) the missing tail is sent as a
 * last delta of that part; a repair that would change text already sent cannot be made in the stream, so the healed
 * JSON is given in the pipeline entry (`data.results[].healed`) instead.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { createRequire } from 'node:module';
import type { IrStreamEvent } from '../../core/ir.js';
import type { PluginPipelineEntry } from '../../core/plugins.js';

/** jsonrepair, loaded by the first reply that needs repairing rather than at start-up (a smaller heap to mark). */
const requireLazily = createRequire(import.meta.url);
const jsonrepair = (text: string): string => (requireLazily('jsonrepair') as typeof import('jsonrepair')).jsonrepair(text);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Made by the first schema compiled (most gateways never heal a reply against a schema). */
let ajvInstance: Ajv | undefined;
const ajv = (): Ajv => (ajvInstance ??= new Ajv({ strict: false, allErrors: false }));
const compiled = new WeakMap<object, ValidateFunction | null>();

/** The JSON format a request asks for: `json_object`, or `json_schema` with its schema; null when none. */
export interface JsonFormat {
  type: 'json_object' | 'json_schema';
  schema: Obj | null;
}

export function jsonFormat(api: string, body: Obj): JsonFormat | null {
  const rf = api === 'responses' ? (isObj(body.text) ? body.text.format : undefined) : api === 'messages' ? (isObj(body.output_format) ? body.output_format : undefined) : body.response_format;
  if (!isObj(rf)) return null;
  if (rf.type === 'json_object') return { type: 'json_object', schema: null };
  if (rf.type === 'json_schema') {
    const schema = api === 'responses' || api === 'messages' ? rf.schema : isObj(rf.json_schema) ? rf.json_schema.schema : undefined;
    return { type: 'json_schema', schema: isObj(schema) ? schema : null };
  }
  return null;
}

/** The reply's text slots (the answer's JSON text), per API. */
function textSlots(api: string, body: Obj): Array<{ get: () => string; set: (t: string) => void }> {
  const out: Array<{ get: () => string; set: (t: string) => void }> = [];
  const slot = (o: Obj, k: string) => typeof o[k] === 'string' && out.push({ get: () => o[k] as string, set: (t) => (o[k] = t) });
  if (api === 'chat') for (const c of Array.isArray(body.choices) ? body.choices : []) if (isObj(c) && isObj(c.message)) slot(c.message, 'content');
  if (api === 'messages') for (const b of Array.isArray(body.content) ? body.content : []) if (isObj(b) && b.type === 'text') slot(b, 'text');
  if (api === 'responses') {
    for (const item of Array.isArray(body.output) ? body.output : []) {
      if (isObj(item) && Array.isArray(item.content)) for (const p of item.content) if (isObj(p) && p.type === 'output_text') slot(p, 'text');
    }
  }
  return out;
}

function validator(schema: Obj): ValidateFunction | null {
  if (!compiled.has(schema)) {
    try {
      compiled.set(schema, ajv().compile(schema));
    } catch {
      compiled.set(schema, null); // a schema Ajv cannot compile: repaired JSON is not checked against it
    }
  }
  return compiled.get(schema) ?? null;
}

/** Heals a non-streamed reply in place; the pipeline entry (null when the request asks for no JSON). */
export function healReply(api: string, request: Obj, reply: Obj): PluginPipelineEntry | null {
  const format = jsonFormat(api, request);
  if (!format) return null;
  const results: HealResult[] = [];
  for (const s of textSlots(api, reply)) {
    const text = s.get();
    let value: unknown;
    let repaired = false;
    try {
      value = JSON.parse(text);
    } catch {
      try {
        const fixed = jsonrepair(text);
        value = JSON.parse(fixed);
        s.set(fixed);
        repaired = true;
      } catch (err) {
        results.push({ repaired: false, valid: false, error: `not repairable: ${(err as Error).message.slice(0, 200)}` });
        continue;
      }
    }
    results.push({ repaired, ...check(format, value) });
  }
  if (api === 'responses' && typeof reply.output_text === 'string') {
    const texts = textSlots(api, reply).map((s) => s.get());
    if (texts.length > 0) reply.output_text = texts.join('');
  }
  return entry(format, results);
}

/** What healing one text did (the `results` of the pipeline entry). */
interface HealResult {
  repaired: boolean;
  valid: boolean | null;
  error?: string;
  /** Streams: how the repair reached the client (`appended`: the missing tail sent as a last delta). */
  delivery?: 'appended' | 'metadata_only';
  /** Streams: the healed JSON, when the repair would change text already sent (so it could not be streamed). */
  healed?: string;
}

function check(format: JsonFormat, value: unknown): Pick<HealResult, 'valid' | 'error'> {
  const v = format.schema ? validator(format.schema) : null;
  const valid = v ? v(value) : null;
  return { valid, ...(v && !valid ? { error: ajv().errorsText(v.errors).slice(0, 300) } : {}) };
}

function entry(format: JsonFormat, results: HealResult[], extra: Obj = {}): PluginPipelineEntry {
  const n = results.filter((r) => r.repaired).length;
  const invalid = results.filter((r) => r.valid === false).length;
  return {
    type: 'response_healing',
    name: 'response-healing',
    summary: n === 0 ? (invalid === 0 ? 'The reply was valid JSON' : 'The reply could not be healed') : `Repaired ${n} invalid JSON repl${n === 1 ? 'y' : 'ies'}${invalid > 0 ? '; still not valid against the schema' : format.schema ? ' (valid against the schema)' : ''}`,
    data: { format: format.type, results, ...extra },
  };
}

/** Texts of a streamed reply kept for healing, per stream (past it the stream is relayed unhealed). */
export const MAX_HEALED_STREAM_CHARS = 8 * 1024 * 1024;

/**
 * response-healing on a streamed reply, over IR stream events (after the content guardrails: it heals what the client
 * received). Events pass through unchanged; each text part's deltas are also kept, and healed when the part ends
 * (its `part_end`, else the finish or the end of the stream): a repair that only appends goes out as one more delta
 * of that part, before the event that ends it.
 */
export class StreamHealer {
  private readonly texts = new Map<number, string>();
  private readonly results: HealResult[] = [];
  private chars = 0;
  private overflow = false;
  private finished = false;

  constructor(private readonly format: JsonFormat) {}

  events(events: IrStreamEvent[]): IrStreamEvent[] {
    if (this.finished) return events;
    let out: IrStreamEvent[] | null = null; // copied only when a delta is added
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      let extra: IrStreamEvent[] = [];
      if (ev.type === 'text_delta') {
        this.chars += ev.text.length;
        if (this.chars > MAX_HEALED_STREAM_CHARS) {
          this.overflow = true;
          this.texts.clear();
        } else if (!this.overflow) this.texts.set(ev.index, (this.texts.get(ev.index) ?? '') + ev.text);
      } else if (ev.type === 'part_end' && this.texts.has(ev.index)) {
        extra = this.heal(ev.index);
      } else if (ev.type === 'finish') {
        extra = this.healAll();
      }
      if (extra.length > 0) out ??= events.slice(0, i);
      if (out) out.push(...extra, ev);
    }
    return out ?? events;
  }

  /** The end of the stream: parts not ended yet are healed (their tails, if any, to send). */
  end(): IrStreamEvent[] {
    return this.finished ? [] : this.healAll();
  }

  pipeline(): PluginPipelineEntry[] {
    if (this.overflow) return [{ type: 'response_healing', name: 'response-healing', summary: `Not applied: the streamed reply is longer than ${MAX_HEALED_STREAM_CHARS} characters`, data: { applied: false, reason: 'too_long', format: this.format.type } }];
    return this.results.length > 0 ? [entry(this.format, this.results, { stream: true })] : [];
  }

  private healAll(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    for (const index of [...this.texts.keys()]) out.push(...this.heal(index));
    this.finished = true;
    return out;
  }

  private heal(index: number): IrStreamEvent[] {
    const text = this.texts.get(index) ?? '';
    this.texts.delete(index);
    if (this.overflow) return [];
    try {
      this.results.push({ repaired: false, ...check(this.format, JSON.parse(text)) });
      return [];
    } catch {
      // not valid JSON: repaired below
    }
    let fixed: string;
    let value: unknown;
    try {
      fixed = jsonrepair(text);
      value = JSON.parse(fixed);
    } catch (err) {
      this.results.push({ repaired: false, valid: false, error: `not repairable: ${(err as Error).message.slice(0, 200)}` });
      return [];
    }
    const checked = check(this.format, value);
    if (fixed.startsWith(text)) {
      this.results.push({ repaired: true, ...checked, delivery: 'appended' });
      return [{ type: 'text_delta', index, text: fixed.slice(text.length) }];
    }
    this.results.push({ repaired: true, ...checked, delivery: 'metadata_only', healed: fixed });
    return [];
  }
}
