/** Model-id variant suffixes (`openai/gpt-4o:nitro`): which are known, and splitting one off. Pure. */

export const MODEL_VARIANTS = new Set(['free', 'nitro', 'floor', 'exacto', 'online', 'thinking', 'extended']);

/** `author/slug:variant` → the base id and the variant; an unknown suffix is part of the id (variant null). */
export function splitVariant(id: string): { base: string; variant: string | null } {
  const colon = id.lastIndexOf(':');
  const variant = colon > 0 ? id.slice(colon + 1) : '';
  return MODEL_VARIANTS.has(variant) ? { base: id.slice(0, colon), variant } : { base: id, variant: null };
}
