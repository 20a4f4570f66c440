/**
 * The IR of a Messages, Responses or Gemini body whose conversation is still bytes (core/lazy-body.ts), without parsing it
 * (issue 18: a 1,000-message body to a same-protocol upstream was converted to the IR and back for nothing). The scan
 * guaranteed every message is `{role, content: <string>}`, and the inbound adapters check such a message by its role
 * alone (a string content is carried as one text part, whatever it holds), so the IR of a stand-in body — one
 * `{role, content: ''}` per role that occurs — has every field the real one has but the conversation. Its `messages`
 * and `system` (Responses puts system and developer items there) are accessors that build the real IR the first time
 * some code reads them (a translation to another protocol); the same-protocol path reads neither. When the stand-in
 * is refused, null: the caller converts the real body, so every error is the one the eager path gives.
 */
import { lazyConversation, standIn, type LazyKey } from '../../core/lazy-body.js';
import { without } from '../../core/raw-json.js';
import type { IrRequest } from '../../core/ir.js';
import type { InboundAdapter } from '../../core/adapters.js';

type Ir = Omit<IrRequest, 'model'>;

/** Lazy IRs → the prompt estimate of the real one (irPromptTokens), known from the scan. */
const estimates = new WeakMap<object, number>();

/** The keys of a lazy IR that are accessors until read. */
const DEFERRED = ['messages', 'system'] as const;

/** The IR of `body` with its conversation deferred, or null when `body[key]` is not lazy or the stand-in is refused. */
export function lazyIr(inbound: InboundAdapter, body: Record<string, unknown>, key: LazyKey): Ir | null {
  const conversation = lazyConversation(body, key);
  if (!conversation) return null;
  const stood = without(body, key);
  stood[key] = standIn(conversation);
  let ir: Ir;
  try {
    ir = inbound.toIr(stood);
  } catch {
    return null;
  }
  // The stand-in's contents are empty: its system holds only what the body's other fields put there.
  let chars = conversation.chars;
  for (const p of ir.system) chars += p.text.length;
  let real: Ir | undefined;
  const full = () => (real ??= inbound.toIr(body));
  // A Gemini body's system is its systemInstruction alone (its contents are user and model turns): the stand-in's is real.
  for (const k of key === 'contents' ? (['messages'] as const) : DEFERRED) defer(ir, k, () => full()[k]);
  estimates.set(ir, Math.ceil(chars / 4));
  return ir;
}

/** `obj[key]` as an accessor of `get()` until assigned (on the object assigned to: copies of the accessor included). */
function defer(obj: object, key: string, get: () => unknown): void {
  Object.defineProperty(obj, key, {
    get,
    set(this: object, value: unknown) {
      Object.defineProperty(this, key, { value, writable: true, enumerable: true, configurable: true });
    },
    enumerable: true,
    configurable: true,
  });
}

/** irPromptTokens of a lazy IR without reading its conversation; null for any other IR. */
export function lazyIrPromptTokens(ir: object): number | null {
  return estimates.get(ir) ?? null;
}

/** Whether `ir[key]` is still deferred (reading it would build the real IR). */
const deferred = (ir: object, key: string): boolean => Object.getOwnPropertyDescriptor(ir, key)?.get !== undefined;

/** A shallow copy of an IR; a lazy IR's deferred fields stay deferred (a spread would read them). */
export function copyIr<T extends object>(ir: T): T {
  return DEFERRED.some((k) => deferred(ir, k)) ? (Object.defineProperties({}, Object.getOwnPropertyDescriptors(ir)) as T) : { ...ir };
}

/**
 * An IR without its conversation, for what does not depend on it (a same-protocol request's URL and headers): no
 * messages, and no system when that is still deferred.
 */
export function withoutConversation<T extends Ir>(ir: T): T {
  const out = copyIr(ir);
  for (const k of DEFERRED) if (k === 'messages' || deferred(out, k)) Object.defineProperty(out, k, { value: [], writable: true, enumerable: true, configurable: true });
  return out;
}
