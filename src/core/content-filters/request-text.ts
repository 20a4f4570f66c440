/**
 * The texts of an inference request that content filters scan, as slots that can be read and rewritten in place:
 * chat `messages[].content` (string or `text` parts) and legacy `prompt`; messages `system` and
 * `messages[].content` (string or `text` blocks, tool results' text); responses `instructions` and `input`
 * (string, or items whose content is a string or `input_text`/`output_text` parts). Pure: mutates only the body
 * it is given.
 */

export interface TextSlot {
  role: string;
  text: string;
  set(text: string): void;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);

function field(out: TextSlot[], holder: Obj, key: string, role: string): void {
  const v = holder[key];
  if (typeof v === 'string') out.push({ role, text: v, set: (t) => (holder[key] = t) });
}

/** A content value: a string, or a list of parts/blocks whose text parts are scanned (nested tool_result content too). */
function content(out: TextSlot[], holder: Obj, key: string, role: string, depth = 0): void {
  const v = holder[key];
  if (typeof v === 'string') return field(out, holder, key, role);
  if (!Array.isArray(v) || depth > 2) return;
  for (const part of v) {
    if (!isObj(part)) continue;
    if (typeof part.type === 'string' && TEXT_PARTS.has(part.type)) field(out, part, 'text', role);
    else if (part.type === 'tool_result') content(out, part, 'content', role, depth + 1);
  }
}

/** A Gemini content (`{role, parts: [{text}]}`): its text parts. */
export function geminiParts(out: TextSlot[], c: unknown, role: string): void {
  if (!isObj(c) || !Array.isArray(c.parts)) return;
  for (const part of c.parts) if (isObj(part) && !part.thought) field(out, part, 'text', role);
}

export function requestTexts(api: string, body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  if (api === 'responses') {
    field(out, body, 'instructions', 'system');
    if (typeof body.input === 'string') field(out, body, 'input', 'user');
    else if (Array.isArray(body.input)) {
      for (const item of body.input) {
        if (!isObj(item)) continue;
        const role = typeof item.role === 'string' ? item.role : 'user';
        if (item.type === undefined || item.type === 'message') content(out, item, 'content', role);
        else if (item.type === 'function_call_output') field(out, item, 'output', 'tool');
      }
    }
    return out;
  }
  if (api === 'messages') {
    content(out, body, 'system', 'system');
  }
  if (api === 'gemini') {
    geminiParts(out, body.systemInstruction ?? body.system_instruction, 'system');
    for (const c of Array.isArray(body.contents) ? body.contents : []) if (isObj(c)) geminiParts(out, c, c.role === 'model' ? 'assistant' : 'user');
    return out;
  }
  if (typeof body.prompt === 'string') field(out, body, 'prompt', 'user');
  if (Array.isArray(body.messages)) {
    for (const m of body.messages) {
      if (!isObj(m)) continue;
      content(out, m, 'content', typeof m.role === 'string' ? m.role : 'user');
    }
  }
  return out;
}
