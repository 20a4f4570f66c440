/**
 * Web search for the `gateway:web_search` server tool (docs/server-tools.md), over the engine the operator names:
 * - `searxng` (the default): a self-hosted SearXNG instance's JSON API, `GET <base>/search?q=<query>&format=json`
 *   answering `{results: [{title, url, content}]}` (its `search.formats` setting must include `json`);
 * - `tavily`: Tavily's search API, `POST <base>/search` with `{query, max_results}` and the API key as a bearer
 *   token, answering `{results: [{title, url, content}]}` (base `https://api.tavily.com` unless set).
 * Only the configured base URL is ever called; one deadline bounds a whole search.
 */
import { OriginPools } from '../http.js';

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export type SearchEngineName = 'searxng' | 'tavily';

export interface SearchEngineConfig {
  engine: SearchEngineName;
  url: string;
  apiKey: string | null;
}

/** Timeouts of a search: a tool call must not hold the model loop for long. */
const TIMEOUTS = { connectMs: 5_000, firstByteMs: 10_000, idleMs: 10_000, totalMs: 15_000 };

export class WebSearch {
  private readonly pools = new OriginPools({ connections: 16, keepAliveTimeout: 30_000 });
  private readonly base: URL;

  constructor(private readonly config: SearchEngineConfig) {
    this.base = new URL(config.url.endsWith('/') ? config.url : `${config.url}/`);
  }

  /** The top `max` results of `query`; throws an Error with a message fit for the model when the search fails. */
  async search(query: string, max: number, cancel?: AbortSignal): Promise<SearchResult[]> {
    // One deadline for the whole search (the pool's timeouts bound only the waits between bytes).
    const deadline = AbortSignal.timeout(TIMEOUTS.totalMs);
    const signal = cancel ? AbortSignal.any([cancel, deadline]) : deadline;
    const url = new URL('search', this.base);
    let method: 'GET' | 'POST' = 'GET';
    let body: string | undefined;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.config.engine === 'tavily') {
      method = 'POST';
      body = JSON.stringify({ query, max_results: max, search_depth: 'basic' });
      headers['content-type'] = 'application/json';
      headers.authorization = `Bearer ${this.config.apiKey ?? ''}`;
    } else {
      url.searchParams.set('q', query);
      url.searchParams.set('format', 'json');
    }
    let text: string;
    let status: number;
    try {
      const res = await this.pools.request(method, { url, headers, body, timeouts: TIMEOUTS, signal });
      status = res.statusCode;
      text = await res.body.text();
    } catch (err) {
      if (deadline.aborted) throw new Error(`no answer within ${TIMEOUTS.totalMs / 1000} s`);
      throw err;
    }
    if (status !== 200) throw new Error(`the search engine answered ${status}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(this.config.engine === 'searxng' ? 'the search engine answered something other than JSON (is format=json enabled in SearXNG?)' : 'the search engine answered something other than JSON');
    }
    const results = (json as { results?: unknown }).results;
    if (!Array.isArray(results)) throw new Error('the search engine answered no results list');
    const out: SearchResult[] = [];
    for (const r of results as Array<Record<string, unknown>>) {
      if (out.length >= max) break;
      if (typeof r?.url !== 'string') continue;
      out.push({ title: typeof r.title === 'string' ? r.title : '', url: r.url, snippet: typeof r.content === 'string' ? r.content : '' });
    }
    return out;
  }

  async close(): Promise<void> {
    await this.pools.close();
  }
}
