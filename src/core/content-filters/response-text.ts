/**
 * The texts of a non-streamed reply, as rewritable slots (role `assistant`): chat `choices[].message.content`
 * (and `reasoning`), messages `content[]` `text` blocks, responses `output[]` messages' `output_text` parts and the
 * `output_text` convenience field. Pure: mutates only the body it is given.
 */
import { geminiParts, type TextSlot } from './request-text.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function slot(out: TextSlot[], holder: Obj, key: string): void {
  const v = holder[key];
  if (typeof v === 'string' && v !== '') out.push({ role: 'assistant', text: v, set: (t) => (holder[key] = t) });
}

export function responseTexts(api: string, body: Obj): TextSlot[] {
  const out: TextSlot[] = [];
  if (api === 'chat' && Array.isArray(body.choices)) {
    for (const c of body.choices) if (isObj(c) && isObj(c.message)) (slot(out, c.message, 'content'), slot(out, c.message, 'reasoning'));
  } else if (api === 'messages' && Array.isArray(body.content)) {
    for (const b of body.content) if (isObj(b) && b.type === 'text') slot(out, b, 'text');
  } else if (api === 'gemini' && Array.isArray(body.candidates)) {
    for (const c of body.candidates) if (isObj(c)) geminiParts(out, c.content, 'assistant');
  } else if (api === 'responses') {
    slot(out, body, 'output_text');
    for (const item of Array.isArray(body.output) ? body.output : []) {
      if (!isObj(item) || !Array.isArray(item.content)) continue;
      for (const part of item.content) if (isObj(part) && part.type === 'output_text') slot(out, part, 'text');
    }
  }
  return out;
}
