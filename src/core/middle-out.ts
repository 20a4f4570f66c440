/**
 * The `context-compression` plugin's `middle-out` engine (docs/plugins.md), as the hosted router documents it: when a
 * prompt does not fit the model's context, messages are removed from the middle of the conversation — where they
 * matter least — until it fits; the leading system/developer messages, the first other message and the last one are
 * kept. Tokens are estimated (about 4 characters per token, as the routing estimate). Pure.
 */

export interface MiddleOutResult<T> {
  messages: T[];
  removed: number;
  tokensBefore: number;
  tokensAfter: number;
}

const estimate = (m: unknown) => Math.ceil(JSON.stringify(m ?? '').length / 4);
const isSystem = (m: unknown) => typeof m === 'object' && m !== null && ['system', 'developer'].includes(String((m as { role?: unknown }).role));

/** `messages` with middle entries removed until their estimate is at most `budget` tokens (or only the kept ones remain). */
export function middleOut<T>(messages: T[], budget: number, overhead = 0): MiddleOutResult<T> {
  const sizes = messages.map(estimate);
  let total = overhead + sizes.reduce((a, b) => a + b, 0);
  const tokensBefore = total;
  let head = 0;
  while (head < messages.length && isSystem(messages[head])) head++;
  head = Math.min(head + 1, messages.length); // the first conversational message stays too
  const keep = messages.map(() => true);
  // The removable range is [head, last); remove from its middle outwards.
  const removable: number[] = [];
  for (let i = head; i < messages.length - 1; i++) removable.push(i);
  removable.sort((a, b) => Math.abs(a - (head + messages.length - 2) / 2) - Math.abs(b - (head + messages.length - 2) / 2) || a - b);
  let removed = 0;
  for (const i of removable) {
    if (total <= budget) break;
    keep[i] = false;
    total -= sizes[i];
    removed++;
  }
  return { messages: removed === 0 ? messages : messages.filter((_, i) => keep[i]), removed, tokensBefore, tokensAfter: total };
}

/**
 * Removing a message must not leave a tool result without its call (or a call without its result): after the cut, a
 * `tool` message whose call is gone is dropped as well, and an assistant turn whose tool calls lost their results
 * keeps its text only. Chat-shaped messages only; other shapes pass unchanged.
 */
export function dropOrphanToolMessages<T>(messages: T[]): T[] {
  type M = Record<string, unknown>;
  const idsOf = (m: M) => (Array.isArray(m?.tool_calls) ? (m.tool_calls as Array<{ id?: unknown }>).map((c) => String(c.id)) : []);
  const results = new Set<string>();
  for (const m of messages as M[]) if (m?.role === 'tool' && typeof m.tool_call_id === 'string') results.add(m.tool_call_id);
  // Assistant turns whose every call still has its result keep them; the others lose their calls (and their results).
  const calls = new Set<string>();
  const stripped = new Set<M>();
  for (const m of messages as M[]) {
    const ids = idsOf(m);
    if (ids.length === 0) continue;
    if (ids.every((id) => results.has(id))) ids.forEach((id) => calls.add(id));
    else stripped.add(m);
  }
  const out: T[] = [];
  for (const m of messages as M[]) {
    if (m?.role === 'tool' && typeof m.tool_call_id === 'string' && !calls.has(m.tool_call_id)) continue;
    if (stripped.has(m)) {
      const { tool_calls: _calls, ...rest } = m;
      out.push({ ...rest, content: rest.content ?? '' } as T);
    } else out.push(m as T);
  }
  return out;
}
