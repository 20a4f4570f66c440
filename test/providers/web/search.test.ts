/** The web_search server tool's engines against the simulator: SearXNG's JSON API and Tavily's search API. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSearch } from '../../../src/providers/web/search.js';
import { createSimulator, type Simulator } from '../../../src/sim/index.js';
import { simSearchResults } from '../../../src/sim/search.js';

describe('WebSearch', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await createSimulator();
  });
  afterAll(async () => sim.close());
  const expected = (q: string, n: number) => simSearchResults(q).slice(0, n).map((r) => ({ title: r.title, url: r.url, snippet: r.content }));

  it('SearXNG: GET /search?q=…&format=json, the top results', async () => {
    const engine = new WebSearch({ engine: 'searxng', url: `${sim.url}/searx`, apiKey: null });
    try {
      expect(await engine.search('node release', 2)).toEqual(expected('node release', 2));
      const sent = sim.requests.filter((r) => r.provider === 'searx').at(-1)!;
      expect(sent.method).toBe('GET');
      expect(sent.path).toBe('/search');
    } finally {
      await engine.close();
    }
  });

  it('Tavily: POST /search with the key as a bearer token and max_results', async () => {
    const engine = new WebSearch({ engine: 'tavily', url: `${sim.url}/tavily`, apiKey: 'tvly-test' });
    try {
      expect(await engine.search('node release', 3)).toEqual(expected('node release', 3));
      const sent = sim.requests.filter((r) => r.provider === 'tavily').at(-1)!;
      expect(sent.method).toBe('POST');
      expect(sent.headers.authorization).toBe('Bearer tvly-test');
      expect(sent.body).toEqual({ query: 'node release', max_results: 3, search_depth: 'basic' });
    } finally {
      await engine.close();
    }
  });

  it('failures are errors with a message fit for the model', async () => {
    const noKey = new WebSearch({ engine: 'tavily', url: `${sim.url}/tavily`, apiKey: null });
    const down = new WebSearch({ engine: 'searxng', url: `${sim.url}/searx-down`, apiKey: null });
    try {
      await expect(noKey.search('x', 1)).rejects.toThrow('the search engine answered 401');
      sim.setKnobs('searx-down', { errorStatus: 503 });
      await expect(down.search('x', 1)).rejects.toThrow('the search engine answered 503');
    } finally {
      await Promise.all([noKey.close(), down.close()]);
    }
  });
});
