/**
 * The `response-healing` plugin (docs/plugins.md): a non-streamed reply to a request with `response_format`
 * json_object or json_schema whose text is not valid JSON is repaired (jsonrepair: unquoted keys, trailing commas,
 * single quotes, truncated structures, code fences, …), then checked against the schema (json_schema); the repaired
 * text replaces the reply's, and what was done goes to gateway_metadata.pipeline. Replies that parse are left alone.
 * Streams are relayed as they come (healing would need the whole reply first): the pipeline says it did not apply.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import { jsonrepair } from 'jsonrepair';
import type { PluginPipelineEntry } from '../../core/plugins.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const ajv = new Ajv({ strict: false, allErrors: false });
const compiled = new WeakMap<object, ValidateFunction | null>();

/** The JSON format a request asks for: `json_object`, or `json_schema` with its schema; null when none. */
export function jsonFormat(api: string, body: Obj): { type: 'json_object' | 'json_schema'; schema: Obj | null } | null {
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
      compiled.set(schema, ajv.compile(schema));
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
  const results: Array<{ repaired: boolean; valid: boolean | null; error?: string }> = [];
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
    const check = format.schema ? validator(format.schema) : null;
    const valid = check ? check(value) : null;
    results.push({ repaired, valid, ...(check && !valid ? { error: ajv.errorsText(check.errors).slice(0, 300) } : {}) });
  }
  if (api === 'responses' && typeof reply.output_text === 'string') {
    const texts = textSlots(api, reply).map((s) => s.get());
    if (texts.length > 0) reply.output_text = texts.join('');
  }
  const n = results.filter((r) => r.repaired).length;
  const invalid = results.filter((r) => r.valid === false).length;
  return {
    type: 'response_healing',
    name: 'response-healing',
    summary: n === 0 ? (invalid === 0 ? 'The reply was valid JSON' : 'The reply could not be healed') : `Repaired ${n} invalid JSON repl${n === 1 ? 'y' : 'ies'}${invalid > 0 ? '; still not valid against the schema' : format.schema ? ' (valid against the schema)' : ''}`,
    data: { format: format.type, results },
  };
}

/** The pipeline entry of a streamed request with response-healing on (relayed unhealed). */
export function healingSkipped(): PluginPipelineEntry {
  return { type: 'response_healing', name: 'response-healing', summary: 'Not applied: streamed replies are relayed as they come', data: { applied: false, reason: 'stream' } };
}
