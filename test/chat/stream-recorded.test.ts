/**
 * The stream fast paths give the same bytes out for the same bytes in as before the relay and the translated sessions
 * shared their read cutting (providers/sse-reads.ts) and event memo (core/byte-shape.ts): the summaries of
 * stream-cases.ts (chat → chat relay; Messages ← chat, chat ← Anthropic, Gemini and chat ← Responses; CRLF, not UTF-8
 * and cut variants; nine read-size patterns) against those recorded from commit 0593489.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cases } from './stream-cases.js';

const recorded = JSON.parse(readFileSync(new URL('./fixtures/stream-recorded.json', import.meta.url), 'utf8')) as Record<string, string>;

describe('stream fast paths against recorded outputs', () => {
  it('give the recorded client bytes, tokens, finish and failures for every stream, pair and read size', () => {
    const got = cases();
    expect(Object.keys(got).length).toBe(450);
    expect(got).toEqual(recorded);
  }, 120_000);
});
