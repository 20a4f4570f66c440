/**
 * Gemini adapter, error answers: Google's `{"error":{code,message,status,details}}` → the gateway's statuses.
 */
import { describe, expect, it } from 'vitest';
import { googleAdapter, retryDelaySeconds } from '../../../src/providers/google/index.js';
import { fixture } from './helpers.js';

const err = (status: number, name: string, headers: Record<string, string> = {}) => googleAdapter.parseError(status, fixture(name), headers);

describe('parseError', () => {
  it('429 RESOURCE_EXHAUSTED → 429 with retry-after from RetryInfo.retryDelay', () => {
    const e = err(429, 'error-429-resource-exhausted.json');
    expect(e.status).toBe(429);
    expect(e.type).toBe('rate_limit_exceeded');
    expect(e.retryAfter).toBe(37);
    expect(e.providerCode).toBe(429);
    expect(e.message).toContain('You exceeded your current quota');
    expect((e.raw as { error: { status: string } }).error.status).toBe('RESOURCE_EXHAUSTED');
  });

  it('a Retry-After header wins over RetryInfo', () => {
    expect(err(429, 'error-429-resource-exhausted.json', { 'retry-after': '5' }).retryAfter).toBe(5);
  });

  it('retryDelay durations round up; a missing RetryInfo gives no hint', () => {
    expect(retryDelaySeconds({ details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '1.203608125s' }] })).toBe(2);
    expect(retryDelaySeconds({ details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: { seconds: 3, nanos: 5e8 } }] })).toBe(4);
    expect(retryDelaySeconds({ details: [{ '@type': 'type.googleapis.com/google.rpc.Help' }] })).toBeNull();
    expect(googleAdapter.parseError(429, '{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}', {}).retryAfter).toBeNull();
  });

  it('400 INVALID_ARGUMENT → 400 invalid_request', () => {
    const e = err(400, 'error-400-invalid-argument.json');
    expect(e.status).toBe(400);
    expect(e.type).toBe('invalid_request');
    expect(e.message).toContain('Unknown name "includeThoughts"');
  });

  it('400 for a too long input → context_length_exceeded', () => {
    const body = '{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}';
    const e = googleAdapter.parseError(400, body, {});
    expect(e.status).toBe(400);
    expect(e.type).toBe('context_length_exceeded');
  });

  it('an invalid API key (sent as 400) → 502 authentication: the gateway credential is wrong, not the request', () => {
    const e = err(400, 'error-400-api-key-invalid.json');
    expect(e.status).toBe(502);
    expect(e.type).toBe('authentication');
    expect(e.providerCode).toBe(400);
  });

  it('403 PERMISSION_DENIED → 502 authentication; 400 FAILED_PRECONDITION → 502', () => {
    expect(googleAdapter.parseError(403, '{"error":{"code":403,"message":"The caller does not have permission","status":"PERMISSION_DENIED"}}', {})).toMatchObject({
      status: 502,
      type: 'authentication',
    });
    const fp = googleAdapter.parseError(
      400,
      '{"error":{"code":400,"message":"User location is not supported for the API use.","status":"FAILED_PRECONDITION"}}',
      {},
    );
    expect(fp).toMatchObject({ status: 502, type: 'provider_unavailable', providerCode: 400 });
  });

  it('500 INTERNAL → 502; 503 overloaded → 529; other 503 → 502; 504 DEADLINE_EXCEEDED → 524', () => {
    expect(err(500, 'error-500-internal.json')).toMatchObject({ status: 502, type: 'provider_unavailable', providerCode: 500 });
    expect(err(503, 'error-503-overloaded.json')).toMatchObject({ status: 529, type: 'provider_overloaded', providerCode: 503 });
    expect(googleAdapter.parseError(503, '{"error":{"code":503,"message":"Service Unavailable","status":"UNAVAILABLE"}}', {})).toMatchObject({
      status: 502,
      providerCode: 503,
    });
    expect(err(504, 'error-504-deadline.json')).toMatchObject({ status: 524, type: 'timeout', providerCode: 504 });
  });

  it('accepts the array envelope and non-JSON bodies', () => {
    const arr = `[${fixture('error-503-overloaded.json')}]`;
    expect(googleAdapter.parseError(503, arr, {})).toMatchObject({ status: 529 });
    const html = googleAdapter.parseError(502, '<html>Bad Gateway</html>', {});
    expect(html).toMatchObject({ status: 502, raw: '<html>Bad Gateway</html>' });
  });
});
