/**
 * Mid-conversation system turns (`IrMessage` with role `system`) for upstreams that have no such turn
 * (docs/internal-representation.md, "System messages"): the system messages before the first user or assistant turn
 * join the top-level instructions; a later one becomes a user-side text, `<system>…</system>`, in place. Pure.
 */
import type { IrMessage, IrPart, IrText } from './ir.js';

/** The text parts of a system turn (other part kinds have no meaning there and are left out). */
export function systemTexts(m: IrMessage): IrText[] {
  return m.content.filter((p): p is IrText => p.type === 'text');
}

/** Splits off the system turns that come before any user or assistant turn. */
export function leadingSystem(messages: IrMessage[]): { system: IrText[]; rest: IrMessage[] } {
  let i = 0;
  const system: IrText[] = [];
  while (i < messages.length && messages[i].role === 'system') system.push(...systemTexts(messages[i++]));
  return { system, rest: i === 0 ? messages : messages.slice(i) };
}

/** A system turn as the text of a user turn (its cache marks kept). */
export function systemAsUserText(m: IrMessage): IrText[] {
  return systemTexts(m).map((t) => {
    const out: IrText = { type: 'text', text: `<system>\n${t.text}\n</system>` };
    if (t.cache_control) out.cache_control = t.cache_control;
    return out;
  });
}

/** Every system turn after the leading ones converted to a user turn (for upstreams without system turns). */
export function withoutSystemTurns(messages: IrMessage[]): { system: IrText[]; messages: IrMessage[] } {
  const { system, rest } = leadingSystem(messages);
  if (!rest.some((m) => m.role === 'system')) return { system, messages: rest };
  return { system, messages: rest.map((m) => (m.role === 'system' ? { role: 'user', content: systemAsUserText(m) as IrPart[] } : m)) };
}
