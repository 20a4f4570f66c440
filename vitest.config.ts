import { defineConfig } from 'vitest/config';

/**
 * Two projects. `unit`: the tests that need no PostgreSQL, Redis or gateway server (pure logic, the protocol adapters,
 * the inbound codecs, the catalog, the simulator, config and the CLI over SQLite) — run without the global setup, in
 * worker threads sharing one module graph, in seconds (`npm run test:unit`). `integration`: everything else, a real
 * gateway over SQLite and PostgreSQL with Redis (`npm run test:integration`). `npm test` runs both, unit first.
 * A new test file belongs to `unit` when it sits in one of the UNIT_DIRS or is listed in UNIT_FILES.
 */
const UNIT_DIRS = ['core', 'providers', 'inbound', 'catalog', 'sim', 'config'];
const UNIT_FILES = [
  'test/chat/relay.test.ts',
  'test/chat/translated-relay.test.ts',
  'test/chat/translated-responses.test.ts',
  'test/chat/translated-memo.test.ts',
  'test/chat/stream-recorded.test.ts',
  'test/guardrails/policy.test.ts',
  'test/speech/adapters.test.ts',
  'test/speech/catalog.test.ts',
  'test/speech/sim.test.ts',
  'test/videos/adapters.test.ts',
  'test/videos/catalog.test.ts',
  'test/videos/states.test.ts',
  'test/store/sqlite-writer.test.ts',
  'test/cli/cli.test.ts',
  'test/services/activity-lookup.test.ts',
  'test/services/memory-caches.test.ts',
  'test/services/secrets-crypto.test.ts',
  'test/bench/ports.test.ts',
  'test/services/heap-growth.test.ts',
  'test/services/fresh-cache.test.ts',
];
const UNIT = [...UNIT_DIRS.map((d) => `test/${d}/**/*.test.ts`), ...UNIT_FILES];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: { name: 'unit', include: UNIT, pool: 'threads', isolate: false },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: UNIT,
          globalSetup: ['test/global-setup.ts'],
          // PostgreSQL-backed suites share one server; files run in parallel but each uses its own database.
          pool: 'forks',
        },
      },
    ],
  },
});
