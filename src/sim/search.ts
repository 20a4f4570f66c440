/**
 * A simulated SearXNG instance (the search engine of the `gateway:web_search` server tool), under `/<provider>/…` like
 * the model APIs:
 *
 *   GET /search?q=<query>&format=json   →   `{query, number_of_results, results: [{url, title, content, engine}]}`
 *   POST /search {query, max_results?}  →   Tavily's `{query, results: [{title, url, content, score}], response_time}`
 *                                           (401 without a bearer token)
 *
 * Results are deterministic: three per query, each naming the query. Without `format=json` the answer is HTML, as
 * SearXNG's is (a gateway must ask for JSON). The usual knobs apply (errors, latency).
 *
 * And web pages for the `gateway:web_fetch` server tool:
 *
 *   GET /pages/html       an HTML page (title, heading, a paragraph with a link, a script and a style to leave out)
 *   GET /pages/redirect   302 to /pages/html;  GET /pages/loop  302 to itself
 *   GET /pages/binary     image/png bytes;      GET /pages/big   3 MiB of text
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

/** The HTML page of `/pages/html` (exported for tests). */
/** Tavily's search API: a bearer key, `{query, max_results}` in, `{results: [{title, url, content, score}]}` out. */
function tavily(ctx: EndpointContext): Reply {
  const auth = ctx.headers.authorization;
  if (typeof auth !== 'string' || !/^Bearer \S+/.test(auth)) return openaiProtocol.error(401, ctx, { message: 'Unauthorized: missing or invalid API key.', type: 'unauthorized', param: null, code: null });
  const b = (ctx.body ?? {}) as Record<string, unknown>;
  if (typeof b.query !== 'string' || !b.query) return openaiProtocol.error(400, ctx, { message: 'query is required', type: 'invalid_request_error', param: 'query', code: null });
  const max = typeof b.max_results === 'number' ? b.max_results : 5;
  const results = simSearchResults(b.query).slice(0, max).map((r, i) => ({ title: r.title, url: r.url, content: r.content, score: 0.9 - i / 10 }));
  return { kind: 'json', status: 200, body: JSON.stringify({ query: b.query, results, response_time: 0.01 }), headers: { 'content-type': 'application/json' }, chunks: 1 };
}

export const SIM_PAGE_HTML =
  '<!doctype html><html><head><title>Sim page</title><style>body{color:red}</style></head>' +
  '<body><h1>Hello from the simulator</h1><p>A paragraph with <a href="/elsewhere">a link</a>.</p><script>alert(1)</script></body></html>';

function page(ctx: EndpointContext): Reply {
  const name = ctx.path.slice('/pages/'.length);
  const html = { 'content-type': 'text/html; charset=utf-8' };
  switch (name) {
    case 'html':
      return { kind: 'json', status: 200, body: SIM_PAGE_HTML, headers: html, chunks: 1 };
    case 'redirect':
      return { kind: 'json', status: 302, body: '', headers: { location: `/${ctx.provider}/pages/html` }, chunks: 1 };
    case 'loop':
      return { kind: 'json', status: 302, body: '', headers: { location: `/${ctx.provider}/pages/loop` }, chunks: 1 };
    case 'binary':
      return { kind: 'json', status: 200, body: '\u0089PNG', headers: { 'content-type': 'image/png' }, chunks: 1 };
    case 'big':
      return { kind: 'json', status: 200, body: 'x'.repeat(3 * 1024 * 1024), headers: { 'content-type': 'text/plain' }, chunks: 1 };
    default:
      return { kind: 'json', status: 404, body: 'not found', headers: { 'content-type': 'text/plain' }, chunks: 1 };
  }
}

export const searchEndpoints: Endpoint[] = [
  { method: 'GET', path: '/search', protocol: openaiProtocol, modelCall: true, handle: search },
  { method: 'POST', path: '/search', protocol: openaiProtocol, modelCall: true, handle: tavily },
  { method: 'GET', path: /^\/pages\/[a-z]+$/, protocol: openaiProtocol, modelCall: true, handle: page },
];
