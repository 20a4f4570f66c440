/** Small assertions shared by the API suites (not a test file itself). */
import { expect } from 'vitest';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface Res {
  status: number;
  body: any;
  headers: Headers;
}

/** The response is the error envelope with the given status; `field`/`rule` are checked when given. */
export function expectError(res: Res, status: number, opts: { field?: string; rule?: string; message?: string | RegExp } = {}): void {
  const ctx = `${res.status} ${JSON.stringify(res.body)}`;
  expect(res.status, ctx).toBe(status);
  expect(res.headers.get('content-type') ?? '', ctx).toMatch(/^application\/json/);
  expect(res.body, ctx).toBeTypeOf('object');
  expect(res.body.error, ctx).toBeTypeOf('object');
  expect(res.body.error.code, ctx).toBe(status);
  expect(typeof res.body.error.message, ctx).toBe('string');
  expect(res.body.error.message.length, ctx).toBeGreaterThan(0);
  if (opts.field !== undefined) {
    // The field is named in the message and in metadata.field.
    expect(res.body.error.message, ctx).toContain(opts.field);
    expect(String(res.body.error.metadata?.field), ctx).toContain(opts.field);
  }
  if (opts.rule !== undefined) {
    expect(res.body.error.metadata?.rule, ctx).toBe(opts.rule);
    expect(res.body.error.message, ctx).toContain(`(${opts.rule})`);
  }
  if (opts.message !== undefined) {
    if (typeof opts.message === 'string') expect(res.body.error.message, ctx).toContain(opts.message);
    else expect(res.body.error.message, ctx).toMatch(opts.message);
  }
}

/** Asserts a success status with a readable failure message. */
export function expectStatus(res: Res, status: number): void {
  expect(res.status, `${res.status} ${JSON.stringify(res.body)}`).toBe(status);
}
