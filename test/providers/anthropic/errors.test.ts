/**
 * Anthropic adapter, error mapping: the documented error envelope and statuses
 * (https://docs.anthropic.com/en/api/errors) → the gateway's statuses (400, 429 + Retry-After, 502, 524, 529).
 */
import { describe, expect, it } from 'vitest';
import { anthropicAdapter } from '../../../src/providers/anthropic/index.js';
import { fixture } from './helpers.js';

const envelope = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });
const parseError = (status: number, text: string, headers: Record<string, string> = {}) => anthropicAdapter.parseError(status, text, headers);

describe('parseError', () => {
  const cases: Array<[number, string, string, number, string]> = [
    [400, 'invalid_request_error', 'max_tokens: Field required', 400, 'invalid_request'],
    [400, 'invalid_request_error', 'prompt is too long: 208310 tokens > 200000 maximum', 400, 'context_length_exceeded'],
    [401, 'authentication_error', 'invalid x-api-key', 502, 'authentication'],
    [403, 'permission_error', 'Your API key does not have permission to use the specified resource.', 502, 'authentication'],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 400, 'invalid_request'],
    [429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', 429, 'rate_limit_exceeded'],
    [500, 'api_error', 'Internal server error', 502, 'provider_unavailable'],
    [504, 'timeout_error', 'Request timed out', 524, 'timeout'],
    [529, 'overloaded_error', 'Overloaded', 529, 'provider_overloaded'],
    // a proxy in front answering 503 for an overloaded upstream: the type decides
    [503, 'overloaded_error', 'Overloaded', 529, 'provider_overloaded'],
    [502, 'api_error', 'upstream connect error', 502, 'provider_unavailable'],
  ];
  for (const [status, type, message, want, wantType] of cases) {
    it(`${status} ${type} → ${want} ${wantType}`, () => {
      const e = parseError(status, envelope(type, message));
      expect(e.status).toBe(want);
      expect(e.type).toBe(wantType);
      expect(e.providerCode).toBe(status);
      if (wantType !== 'authentication') expect(e.message).toBe(message);
      expect(e.raw).toMatchObject({ type: 'error', error: { type, message } });
    });
  }

  it('keeps Retry-After on 429 and 529', () => {
    expect(parseError(429, envelope('rate_limit_error', 'slow down'), { 'retry-after': '12' }).retryAfter).toBe(12);
    expect(parseError(529, envelope('overloaded_error', 'Overloaded'), { 'retry-after': '3' }).retryAfter).toBe(3);
  });

  it('maps the documented not_found example and a non-JSON body', () => {
    const nf = parseError(404, fixture('error-not-found.json'));
    expect(nf.status).toBe(502);
    expect(nf.message).toBe('The requested resource could not be found.');
    const html = parseError(413, '<html><body>413 Request Entity Too Large</body></html>');
    expect(html.status).toBe(400);
    expect(html.message).toBe('Provider rejected the request');
    expect(typeof html.raw).toBe('string');
  });
});
