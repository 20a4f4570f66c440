import { describe, expect, it } from 'vitest';
import { buildAliasIndex, closeMatches, normalizeModelId, resolveModelId, unresolvedMessage, type Resolution } from '../../src/core/model-aliases.js';
import { shippedCatalog } from '../../src/services/shipped-catalog.js';

const MODELS = [
  { id: 'anthropic/claude-sonnet-4.5', canonical_slug: 'anthropic/claude-4.5-sonnet-20250929' },
  { id: 'anthropic/claude-opus-5.5', canonical_slug: 'anthropic/claude-5.5-opus-20260924' },
  { id: 'anthropic/claude-haiku-4.5', canonical_slug: 'anthropic/claude-4.5-haiku-20251001', aliases: ['haiku-fast'] },
  { id: 'openai/gpt-5', canonical_slug: 'openai/gpt-5-2025-08-07' },
  { id: 'openai/gpt-5-mini', canonical_slug: 'openai/gpt-5-mini-2025-08-07' },
  { id: 'openai/gpt-4o-mini', canonical_slug: 'openai/gpt-4o-mini-2024-07-18' },
  { id: 'google/gemini-2.5-pro', canonical_slug: 'google/gemini-2.5-pro' },
  { id: 'deepseek/deepseek-v3', canonical_slug: 'deepseek/deepseek-v3' },
  // Two models with the same slug under different authors: the bare slug is ambiguous.
  { id: 'meta-llama/llama-3.3-70b-instruct', canonical_slug: 'meta-llama/llama-3.3-70b-instruct' },
  { id: 'nvidia/llama-3.3-70b-instruct', canonical_slug: 'nvidia/llama-3.3-70b-instruct' },
  // An alias claimed by two models (possible only across catalogs merged without validation): ambiguous.
  { id: 'test/one', canonical_slug: 'test/one', aliases: ['shared'] },
  { id: 'test/two', canonical_slug: 'test/two', aliases: ['shared'] },
];
const index = buildAliasIndex(MODELS);
const ORG = { 'gpt-6.1-sol': 'openai/gpt-5', 'my-model': 'claude-sonnet-4-5', 'broken': 'nothing-like-it' };

const found = (id: string, via: string): Resolution => ({ kind: 'found', id, via } as Resolution);

describe('resolveModelId', () => {
  const table: Array<[string, Resolution]> = [
    ['anthropic/claude-sonnet-4.5', found('anthropic/claude-sonnet-4.5', 'id')],
    ['claude-sonnet-4-5', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-sonnet-4-5-20250929', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-sonnet-4.5', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['Claude-Sonnet-4-5', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['anthropic/claude-sonnet-4-5', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-sonnet-4-5@20250929', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-sonnet-4-5-20250929-v1:0', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-4.5-sonnet', found('anthropic/claude-sonnet-4.5', 'normalized')],
    ['claude-opus-5-5', found('anthropic/claude-opus-5.5', 'normalized')],
    ['claude-haiku-4-5-20251001', found('anthropic/claude-haiku-4.5', 'normalized')],
    ['haiku-fast', found('anthropic/claude-haiku-4.5', 'alias')],
    ['HAIKU-FAST', found('anthropic/claude-haiku-4.5', 'alias')],
    ['gpt-5', found('openai/gpt-5', 'normalized')],
    ['gpt-5-2025-08-07', found('openai/gpt-5', 'normalized')],
    ['gpt-5-mini', found('openai/gpt-5-mini', 'normalized')],
    ['gpt-4o-mini-2024-07-18', found('openai/gpt-4o-mini', 'normalized')],
    ['gemini-2.5-pro', found('google/gemini-2.5-pro', 'normalized')],
    ['models/gemini-2.5-pro', found('google/gemini-2.5-pro', 'normalized')],
    ['deepseek-v3', found('deepseek/deepseek-v3', 'normalized')],
    ['gpt-6.1-sol', found('openai/gpt-5', 'org_alias')],
    ['my-model', found('anthropic/claude-sonnet-4.5', 'org_alias')],
    ['llama-3.3-70b-instruct', { kind: 'ambiguous', candidates: ['meta-llama/llama-3.3-70b-instruct', 'nvidia/llama-3.3-70b-instruct'] }],
    ['shared', { kind: 'ambiguous', candidates: ['test/one', 'test/two'] }],
    // Closest first: one edit away, then the other Claude models of the same family shape.
    ['claude-sonet-4-5', { kind: 'unknown', suggestions: ['anthropic/claude-sonnet-4.5', 'anthropic/claude-haiku-4.5', 'anthropic/claude-opus-5.5'] }],
    ['gpt-5-nano', { kind: 'unknown', suggestions: ['openai/gpt-5', 'openai/gpt-5-mini'] }],
    ['broken', { kind: 'unknown', suggestions: [] }],
    ['totally-unrelated-name', { kind: 'unknown', suggestions: [] }],
  ];
  it.each(table)('%s', (requested, want) => {
    expect(resolveModelId(requested, index, ORG)).toEqual(want);
  });

  it('is deterministic whatever the catalog order', () => {
    const reversed = buildAliasIndex([...MODELS].reverse());
    for (const [requested] of table) expect(resolveModelId(requested, reversed, ORG)).toEqual(resolveModelId(requested, index, ORG));
  });

  it('an exact catalog id wins over an organization alias of the same name', () => {
    expect(resolveModelId('openai/gpt-5', index, { 'openai/gpt-5': 'anthropic/claude-opus-5.5' })).toEqual(found('openai/gpt-5', 'id'));
  });

  it('names the candidates or the close matches in the 404 message', () => {
    expect(unresolvedMessage('llama-3.3-70b-instruct', { kind: 'ambiguous', candidates: ['a/x', 'b/x'] })).toBe('llama-3.3-70b-instruct is ambiguous: it matches a/x, b/x; send one of these model IDs');
    expect(unresolvedMessage('claude-sonet-4-5', { kind: 'unknown', suggestions: ['anthropic/claude-sonnet-4.5'] })).toBe('claude-sonet-4-5 is not a valid model ID; did you mean anthropic/claude-sonnet-4.5?');
    expect(unresolvedMessage('zzz', { kind: 'unknown', suggestions: [] })).toBe('zzz is not a valid model ID');
  });

  it('normalizes', () => {
    expect(normalizeModelId('anthropic/Claude-3-5-Sonnet-Latest')).toBe('claude-3.5-sonnet');
    expect(normalizeModelId('gpt-4o-2024-08-06')).toBe('gpt-4o');
    expect(normalizeModelId('deepseek-v3')).toBe('deepseek-v3');
    expect(closeMatches('', index)).toEqual([]);
  });
});

describe('the shipped catalog', () => {
  const shipped = buildAliasIndex(shippedCatalog().models);
  // What the agents send by default (Claude Code 2.1.331: claude-opus-5-5, its haiku and sonnet; dated ids; Codex
  // 0.169.0: gpt-6.1-sol) and the examples.
  it.each([
    ['claude-opus-5-5', 'anthropic/claude-opus-5.5'],
    ['claude-sonnet-5-5', 'anthropic/claude-sonnet-5.5'],
    ['claude-haiku-5-5', 'anthropic/claude-haiku-5.5'],
    ['claude-sonnet-4-5', 'anthropic/claude-sonnet-4.5'],
    ['claude-sonnet-4-5-20250929', 'anthropic/claude-sonnet-4.5'],
    ['claude-haiku-4-5', 'anthropic/claude-haiku-4.5'],
    ['claude-haiku-4-5-20251001', 'anthropic/claude-haiku-4.5'],
    ['claude-opus-4-6', 'anthropic/claude-opus-4.6'],
    ['claude-sonnet-4-6', 'anthropic/claude-sonnet-4.6'],
    ['gpt-5', 'openai/gpt-5'],
    ['gpt-5.5', 'openai/gpt-5.5'],
    ['gpt-6.1-sol', 'openai/gpt-6.1-sol'],
    ['gpt-6.1-sol-2026-09-29', 'openai/gpt-6.1-sol'],
    ['gemini-2.5-pro', 'google/gemini-2.5-pro'],
    ['gemini-2.5-flash', 'google/gemini-2.5-flash'],
  ])('%s → %s', (requested, id) => {
    expect(resolveModelId(requested, shipped)).toMatchObject({ kind: 'found', id });
  });

  it('has no ambiguous bare slug', () => {
    for (const m of shippedCatalog().models) {
      const r = resolveModelId(m.id.split('/')[1], shipped);
      expect(r, m.id).toMatchObject({ kind: 'found', id: m.id });
    }
  });

  it('refuses an id it does not know with close matches', () => {
    const r = resolveModelId('claude-opus-4-8', shipped);
    expect(r.kind).toBe('unknown');
    expect((r as { suggestions: string[] }).suggestions).toContain('anthropic/claude-opus-4.6');
  });
});
