/**
 * A simulated SearXNG instance (the search engine of the `gateway:web_search` server tool), under `/<provider>/…` like
 * the model APIs:
 *
 *   GET /search?q=<query>&format=json   →   `{query, number_of_results, results: [{url, title, content, engine}]}`
 *
 * Results are deterministic: three per query, each naming the query. Without `format=json` the answer is HTML, as
 * SearXNG's is (a gateway must ask for JSON). The usual knobs apply (errors, latency).
 */
import { openaiProtocol } from './openai.js';
import type { Endpoint, EndpointContext, Reply } from './protocol.js';

/** The results the simulator gives for a query (exported for tests). */
export function simSearchResults(query: string): Array<{ url: string; title: string; content: string; engine: string }> {
  const slug = encodeURIComponent(query.toLowerCase().replace(/\s+/g, '-'));
  return [1, 2, 3].map((n) => ({ url: `https://example.org/${slug}/${n}`, title: `Result ${n} for ${query}`, content: `Snippet ${n} about ${query}.`, engine: 'sim' }));
}

function search(ctx: EndpointContext): Reply {
  const params = new URLSearchParams(ctx.query);
  const q = params.get('q') ?? '';
  if (params.get('format') !== 'json') return { kind: 'json', status: 200, body: '<!doctype html><title>SearXNG</title>', headers: { 'content-type': 'text/html' }, chunks: 1 };
  if (!q) return openaiProtocol.error(400, ctx, { message: 'q is required', type: 'invalid_request_error', param: 'q', code: null });
  const results = simSearchResults(q);
  return { kind: 'json', status: 200, body: JSON.stringify({ query: q, number_of_results: results.length, results }), headers: { 'content-type': 'application/json' }, chunks: 1 };
}

export const searchEndpoints: Endpoint[] = [{ method: 'GET', path: '/search', protocol: openaiProtocol, modelCall: true, handle: search }];
