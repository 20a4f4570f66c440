/**
 * The health rule (core/health-rule.ts, docs/health.md): one case per failure kind, on the errors the gateway really
 * builds (the upstream status mapping and the network error mapping), not on hand-made facts only.
 */
import { describe, expect, it } from 'vitest';
import { countsAgainstHealth } from '../../src/core/health-rule.js';
import { mapUpstreamStatus, UpstreamError } from '../../src/core/provider-errors.js';
import { networkError } from '../../src/providers/http.js';

const upstream = (status: number, contextTooLong = false) => mapUpstreamStatus(status, 'message', null, null, contextTooLong);

describe('countsAgainstHealth: the request’s own fault never counts', () => {
  it('the client went away (cancelled)', () => {
    expect(countsAgainstHealth(new UpstreamError(499, 'Request cancelled by the client', 'cancelled', null, null))).toBe(false);
  });
  it.each([400, 413, 422])('an upstream %i (invalid_request)', (status) => {
    const e = upstream(status);
    expect(e.type).toBe('invalid_request');
    expect(countsAgainstHealth(e)).toBe(false);
  });
  it('a context-length refusal (context_length_exceeded)', () => {
    const e = upstream(400, true);
    expect(e.type).toBe('context_length_exceeded');
    expect(countsAgainstHealth(e)).toBe(false);
  });
  it.each([404, 405, 409, 410, 415])('any other upstream 4xx (%i), though answered as a 502', (status) => {
    const e = upstream(status);
    expect(e.status).toBe(502);
    expect(countsAgainstHealth(e)).toBe(false);
  });
  it('a validation-like error event inside a stream (an invalid_request with the upstream’s 200)', () => {
    expect(countsAgainstHealth(new UpstreamError(400, 'bad tool schema', 'invalid_request', 200, null))).toBe(false);
  });
});

describe('countsAgainstHealth: the endpoint’s failures count', () => {
  it.each([401, 403])('refused credentials (%i, authentication)', (status) => {
    const e = upstream(status);
    expect(e.type).toBe('authentication');
    expect(countsAgainstHealth(e)).toBe(true);
  });
  it('a rate limit (429)', () => {
    expect(countsAgainstHealth(upstream(429))).toBe(true);
  });
  it('overloaded (529)', () => {
    const e = upstream(529);
    expect(e.type).toBe('provider_overloaded');
    expect(countsAgainstHealth(e)).toBe(true);
  });
  it.each([500, 502, 503])('a server error (%i)', (status) => {
    expect(countsAgainstHealth(upstream(status))).toBe(true);
  });
  it.each([408, 504, 524])('an upstream timeout (%i)', (status) => {
    const e = upstream(status);
    expect(e.type).toBe('timeout');
    expect(countsAgainstHealth(e)).toBe(true);
  });
  it('the gateway’s own timeouts (first byte, idle, total)', () => {
    expect(countsAgainstHealth(new UpstreamError(524, 'Provider did not answer within the first-byte timeout', 'timeout', null, null))).toBe(true);
  });
  it('a malformed reply (a 2xx that is not a valid answer)', () => {
    expect(countsAgainstHealth(new UpstreamError(502, 'Provider returned an invalid (non-JSON) response', 'provider_unavailable', 200, '<html>'))).toBe(true);
  });
  it('a refused or reset connection', () => {
    const e = networkError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    expect(e.providerCode).toBeNull();
    expect(countsAgainstHealth(e)).toBe(true);
  });
  it('an error thrown by the code that reads the reply (mapped to a network error)', () => {
    expect(countsAgainstHealth(networkError(new TypeError('x is undefined')))).toBe(true);
  });
});
