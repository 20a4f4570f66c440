/**
 * Simulated rerank APIs (under `/<provider>/…` like the other protocols):
 *
 *   POST /v1/rerank   Jina-style (also vLLM's): `{model, query, documents, top_n?, return_documents?}` →
 *                     `{model, usage: {total_tokens}, results: [{index, relevance_score, document?}]}`
 *   POST /v2/rerank   Cohere v2: `{model, query, documents: string[], top_n?}` →
 *                     `{id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}`
 *   POST /voyage/v1/rerank   Voyage AI: `{model, query, documents: string[], top_k?}` →
 *                     `{object: "list", data: [{index, relevance_score}], model, usage: {total_tokens}}`
 *
 * Scores are deterministic (`simRelevance`, exported for tests): the share of the query's words found in the document,
 * plus a small tie-break from a hash of both. Results are sorted by score, highest first, and cut to `top_n`. Tokens
 * (Jina): ceil(characters / 4) of the query once per document plus each document. Search units (Cohere): one per 100
 * documents. The usual knobs apply.
 */
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, JsonReply, Reply } from './protocol.js';
import { hash32, tokensOfChars } from './text.js';

type Doc = string | { text?: string; image?: string };
const textOf = (d: Doc) => (typeof d === 'string' ? d : (d.text ?? d.image ?? ''));
const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** The simulator's relevance of a document to a query, in [0, 1). */
export function simRelevance(query: string, document: Doc): number {
  const q = new Set(words(query));
  const d = new Set(words(textOf(document)));
  let hits = 0;
  for (const w of q) if (d.has(w)) hits++;
  const share = q.size === 0 ? 0 : hits / q.size;
  return Math.round((share * 0.9 + (hash32(`${query}\u0000${textOf(document)}`) % 1000) / 10_000) * 1e6) / 1e6;
}

const invalid = (ctx: EndpointContext, message: string, param: string | null): JsonReply => openaiProtocol.error(400, ctx, { message, type: 'invalid_request_error', param, code: null });

function rerank(style: 'jina' | 'cohere' | 'voyage') {
  const cohere = style !== 'jina';
  return (ctx: EndpointContext): Reply => {
    const b = ctx.body as Record<string, unknown> | null;
    if (!b || typeof b !== 'object') return invalid(ctx, 'The request body must be a JSON object.', null);
    if (typeof b.model !== 'string' || b.model === '') return invalid(ctx, 'model is required', 'model');
    if (typeof b.query !== 'string' || b.query === '') return invalid(ctx, 'query is required', 'query');
    const docs = b.documents as Doc[] | undefined;
    if (!Array.isArray(docs) || docs.length === 0) return invalid(ctx, 'documents must be a non-empty list', 'documents');
    if (cohere && !docs.every((d) => typeof d === 'string')) return invalid(ctx, 'documents must be strings', 'documents');
    const topField = style === 'voyage' ? 'top_k' : 'top_n';
    const top = b[topField];
    if (top !== undefined && !(Number.isInteger(top) && (top as number) >= 1)) return invalid(ctx, `${topField} must be a positive integer`, topField);
    const ranked = docs
      .map((d, index) => ({ index, relevance_score: simRelevance(b.query as string, d) }))
      .sort((x, y) => y.relevance_score - x.relevance_score)
      .slice(0, (top as number | undefined) ?? docs.length);
    if (style === 'voyage') {
      let total = 0;
      for (const d of docs) total += tokensOfChars((b.query as string).length) + tokensOfChars(textOf(d).length);
      return { kind: 'json', status: 200, body: JSON.stringify({ object: 'list', data: ranked, model: b.model, usage: { total_tokens: total } }), headers: { 'content-type': 'application/json' }, chunks: 1 };
    }
    if (cohere) {
      const body = { id: `rr-sim${ctx.rid}`, results: ranked, meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(docs.length / 100) } } };
      return { kind: 'json', status: 200, body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, chunks: 1 };
    }
    let tokens = 0;
    for (const d of docs) tokens += tokensOfChars((b.query as string).length) + tokensOfChars(textOf(d).length);
    const results = b.return_documents === true ? ranked.map((r) => ({ ...r, document: { text: textOf(docs[r.index]) } })) : ranked;
    return { kind: 'json', status: 200, body: JSON.stringify({ model: b.model, usage: { total_tokens: tokens }, results }), headers: { 'content-type': 'application/json' }, chunks: 1 };
  };
}

export const rerankEndpoints: Endpoint[] = [
  { method: 'POST', path: '/v1/rerank', protocol: openaiProtocol, modelCall: true, handle: rerank('jina') },
  { method: 'POST', path: '/v2/rerank', protocol: openaiProtocol, modelCall: true, handle: rerank('cohere') },
  { method: 'POST', path: '/voyage/v1/rerank', protocol: openaiProtocol, modelCall: true, handle: rerank('voyage') },
];
