/**
 * The Gemini inbound API's client side of the fidelity matrix: the official `@google/genai` SDK
 * (`models.generateContent`, `models.generateContentStream`) against the gateway, its answers reduced to the
 * protocol-neutral `Observed` value of harness.ts (from the SDK's own response objects; thought parts → reasoning,
 * `thoughtSignature` → signatures, a `gateway-redacted:` signature → encrypted reasoning, functionCall parts → calls).
 */
import type { GoogleGenAI } from '@google/genai';
import type { ClientResult, Finish, Json, Observed, Usage } from './harness.js';

const REDACTED = 'gateway-redacted:';
const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** usageMetadata (thoughts counted apart from candidates; no cache-write count in Gemini's usage). */
function usageOf(u: Json | undefined): Usage | null {
  if (!u) return null;
  const thoughts = n(u.thoughtsTokenCount);
  return { input: n(u.promptTokenCount), output: n(u.candidatesTokenCount) + thoughts, cacheRead: n(u.cachedContentTokenCount), cacheWrite: 0, reasoning: thoughts };
}

function observe(parts: Json[], finishReason: string | null, usage: Json | undefined): Observed {
  const o: Observed = { text: '', reasoning: '', signatures: [], encrypted: [], calls: [], finish: 'other', native: finishReason, usage: usageOf(usage) };
  for (const p of parts) {
    if (p.thought === true) o.reasoning += p.text ?? '';
    else if (p.functionCall) o.calls.push({ id: p.functionCall.id ?? null, name: p.functionCall.name, args: p.functionCall.args ?? {} });
    else if (typeof p.text === 'string') o.text += p.text;
    const sig = p.thoughtSignature as string | undefined;
    if (sig?.startsWith(REDACTED)) o.encrypted.push(sig.slice(REDACTED.length));
    else if (sig) o.signatures.push(sig);
  }
  const f = finishReason;
  o.finish = f === 'STOP' ? (o.calls.length > 0 ? 'tool_calls' : 'stop') : f === 'MAX_TOKENS' ? 'length' : f === 'SAFETY' ? 'content_filter' : ('other' as Finish);
  return o;
}

/** One call with the SDK; `body` is the SDK's parameter object ({model, contents, config}). */
export async function callGemini(ai: GoogleGenAI, body: Json, stream: boolean): Promise<ClientResult> {
  if (!stream) {
    const r = (await ai.models.generateContent(body as never)) as unknown as Json;
    const cand = r.candidates[0] as Json;
    const parts = (cand.content?.parts ?? []) as Json[];
    return { observed: observe(parts, cand.finishReason ?? null, r.usageMetadata), body: r, cost: r.usageMetadata?.cost ?? null };
  }
  const chunks = await ai.models.generateContentStream(body as never);
  const parts: Json[] = [];
  let finish: string | null = null;
  let usage: Json | undefined;
  let count = 0;
  for await (const c of chunks) {
    const chunk = c as unknown as Json;
    count++;
    const cand = chunk.candidates?.[0] as Json | undefined;
    parts.push(...((cand?.content?.parts ?? []) as Json[]));
    if (cand?.finishReason) {
      if (finish !== null) throw new Error('finishReason on more than one chunk');
      finish = cand.finishReason;
    }
    if (chunk.usageMetadata) usage = chunk.usageMetadata;
  }
  if (finish === null) throw new Error('stream without a finishReason');
  if (count < 2) throw new Error('a stream of fewer than two chunks');
  // The answer as a client keeps it: the parts in order, as one model content.
  const answer = { candidates: [{ content: { role: 'model', parts }, finishReason: finish }], usageMetadata: usage };
  return { observed: observe(parts, finish, usage), body: answer, cost: usage?.cost ?? null };
}

/** The finishReason the Gemini API must show for a protocol-neutral finish. */
export function geminiFinish(f: Finish): string {
  return { stop: 'STOP', tool_calls: 'STOP', length: 'MAX_TOKENS', content_filter: 'SAFETY', other: 'OTHER' }[f];
}
