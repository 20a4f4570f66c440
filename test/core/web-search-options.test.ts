/** Web search options on the tool itself (OpenAI's and Anthropic's shapes) as the gateway's search parameters. */
import { describe, expect, it } from 'vitest';
import { domainAllowed, webSearchOptions } from '../../src/core/server-tools.js';

describe('webSearchOptions', () => {
  it.each([
    [{ type: 'web_search', filters: { allowed_domains: ['https://Docs.Python.org/3/', 'example.com'] }, search_context_size: 'low' }, { allowed_domains: ['docs.python.org', 'example.com'], max_results: 3 }],
    [{ type: 'web_search_preview', search_context_size: 'high', user_location: { type: 'approximate', city: 'Paris' } }, { max_results: 10 }],
    [{ type: 'web_search_20250305', name: 'web_search', allowed_domains: ['a.org'], blocked_domains: ['*.b.org'], max_uses: 2 }, { allowed_domains: ['a.org'], blocked_domains: ['b.org'] }],
    [{ type: 'web_search', search_context_size: 'huge', filters: { allowed_domains: 'x.org' } }, {}],
  ])('%j → %j', (tool, want) => {
    expect(webSearchOptions(tool)).toEqual(want);
  });
});

describe('domainAllowed', () => {
  it.each([
    ['https://docs.python.org/3/x', ['python.org'], undefined, true],
    ['https://python.org.evil.com/', ['python.org'], undefined, false],
    ['https://a.example.org/', undefined, ['example.org'], false],
    ['https://example.com/', ['example.org'], ['example.com'], false],
    ['https://example.net/', undefined, undefined, true],
    ['not a url', undefined, undefined, false],
  ])('%s allowed %j blocked %j → %s', (url, allowed, blocked, want) => {
    expect(domainAllowed(url, allowed, blocked)).toBe(want);
  });
});
