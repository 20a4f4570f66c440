/** A provider's `max_connections` and `http2` reach the pool of its origin (CatalogService.originLimits). */
import { describe, expect, it } from 'vitest';
import { buildCatalog, CatalogService } from '../../src/services/catalog.js';

const dp = { training: false, retains_prompts: false, zdr: true };
const catalog = (providers: object[]) => new CatalogService(buildCatalog({ providers }, { providers: [], models: [], endpoints: [] }), {});
const defaults = { connections: 16_384, http2: false };

describe('connection limits per provider origin', () => {
  it('unset: the defaults (GATEWAY_UPSTREAM_CONNECTIONS, GATEWAY_UPSTREAM_HTTP2)', () => {
    const c = catalog([{ slug: 'a', protocol: 'openai', base_url: 'https://a.example/v1', no_auth: true, data_policy: dp }]);
    expect(c.originLimits('https://a.example', defaults)).toEqual(defaults);
    expect(c.originLimits('https://unknown.example', { connections: 7, http2: true })).toEqual({ connections: 7, http2: true });
  });

  it("a provider's own values win; providers sharing an origin get the largest bound, HTTP/2 if any asks", () => {
    const c = catalog([
      { slug: 'a', protocol: 'openai', base_url: 'https://a.example/v1', no_auth: true, data_policy: dp, max_connections: 32, http2: true },
      { slug: 'b', protocol: 'openai', base_url: 'https://shared.example/x/v1', no_auth: true, data_policy: dp, max_connections: 10 },
      { slug: 'c', protocol: 'anthropic', base_url: 'https://shared.example/y', no_auth: true, data_policy: dp, max_connections: 50, http2: false },
    ]);
    expect(c.originLimits('https://a.example', defaults)).toEqual({ connections: 32, http2: true });
    expect(c.originLimits('https://shared.example', defaults)).toEqual({ connections: 50, http2: false });
  });
});
