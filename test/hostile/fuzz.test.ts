/**
 * Issue 16: a fuzzer generated from the served OpenAPI document — every operation, so that a new route is fuzzed
 * without anyone adding it — run on SQLite and PostgreSQL against a healthy simulator. Each case is a request built
 * from the operation's schemas and then mutated (fuzz/cases.ts); the test fails on any 5xx or any error body outside
 * the envelope. A fixed seed and a case count that keeps CI short; `npm run fuzz` runs longer
 * (GATEWAY_FUZZ_CASES, GATEWAY_FUZZ_SEED).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatEnv } from '../chat-helpers.js';
import { examples, startFuzzEnv } from './fuzz/env.js';
import { BACKENDS, createInferenceKey } from '../helpers.js';
import { fuzz } from './fuzz/run.js';

const CASES = Number(process.env.GATEWAY_FUZZ_CASES ?? 2000);
const SEED = Number(process.env.GATEWAY_FUZZ_SEED ?? 16);
const LONG = CASES > 5000;

describe.each(BACKENDS)('OpenAPI-driven fuzzing (%s)', (backend) => {
  let env: ChatEnv;
  beforeAll(async () => {
    env = await startFuzzEnv(backend);
  });
  afterAll(async () => env?.close());

  it(`${CASES} cases (seed ${SEED}): no 5xx, every error in the envelope`, { timeout: LONG ? 3_600_000 : 240_000 }, async () => {
    const doc = (await (await fetch(`${env.t.api}/openapi.json`)).json()) as Record<string, any>;
    // Fixtures that exist, so that valid cases reach past the 404s: a victim key (not the fuzzer's own), a workspace,
    // a preset, a guardrail, a member.
    const victim = await createInferenceKey(env.t, { name: 'victim' });
    const ws = await env.t.call('POST', '/workspaces', { body: { name: 'Fuzz', slug: 'fuzz' } });
    const preset = await env.t.call('POST', '/presets/fuzz-preset/chat/completions', { body: { model: 'test/alpha' } });
    const guardrail = await env.t.call('POST', '/guardrails', { body: { name: 'fuzz guardrail' } });
    const member = await env.t.call('POST', '/organization/members', { body: { email: 'fuzz@example.com' } });
    const fx = {
      keys: [env.key, env.t.adminKey],
      params: {
        hash: [victim.hash],
        id: [ws.body?.data?.id, 'default', guardrail.body?.data?.id, member.body?.data?.id].filter(Boolean) as string[],
        slug: ['fuzz-preset', 'alpha'],
        author: ['test'],
        version: ['1'],
        jobId: ['vid-none'],
      },
      examples: examples(victim.hash, member.body?.data?.id ?? 'none'),
    };
    const models = ['test/alpha', 'test/beta', 'test/claude', 'test/gemini', 'test/responses', 'test/unpriced', 'test/embed', 'test/tts', 'test/whisper', 'test/sora', 'test/veo'];
    const ctx = { components: doc.components?.schemas ?? {}, hints: { model: models, role: ['user', 'assistant'], workspace_id: ['default', 'fuzz'] } };
    const started = Date.now();
    const report = await fuzz(env.t.url, doc, ctx, fx, { seed: SEED, cases: CASES, concurrency: 4 });
    console.log(`fuzz ${backend}: ${report.cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${JSON.stringify(report.byStatus)}; ${report.failures.length} failures`);
    if (process.env.GATEWAY_FUZZ_VERBOSE) for (const [op, st] of Object.entries(report.byOperation)) console.log(`  ${op} ${JSON.stringify(st)}`);
    for (const f of report.failures.slice(0, 40)) console.log(`  ${f.status} ${f.case}\n      → ${f.body}`);
    expect(report.failures.slice(0, 20)).toEqual([]);
    expect(report.cases).toBeGreaterThan(CASES * 0.9);
  });
});
