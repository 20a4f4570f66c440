/** What the protocols' token-counting APIs share (anthropic/, google/, openai-responses/ count-tokens.ts). */
import { invalidResponse, parseJsonObject, tokenCount } from './openai/ir-upstream.js';

/** The count in an upstream answer (`field` a non-negative integer), or a 502. */
export function countIn(text: string, field: string): number {
  const json = parseJsonObject(text);
  const n = tokenCount(json[field]);
  if (n === null) throw invalidResponse(`Provider returned an invalid response (no ${field})`, json);
  return n;
}
