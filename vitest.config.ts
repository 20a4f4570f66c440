import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
    // PostgreSQL-backed suites share one server; files run in parallel but each uses its own database.
    pool: 'forks',
  },
});
