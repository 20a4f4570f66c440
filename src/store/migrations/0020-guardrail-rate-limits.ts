/** Migration 0020: rate limits on guardrails. Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { Db } from './types.js';

/**
 * Guardrail rate limits (our extension, docs/guardrails.md "Rate limits"), the same shape as a key's (migrations 0005
 * and 0014): requests per window of `rate_limit_interval_s` seconds and tokens per clock minute; null: none.
 */
export function guardrailRateLimits(): Migration {
  return {
    async up(db: Db) {
      await db.schema.alterTable('guardrails').addColumn('rate_limit_requests', 'integer').execute();
      await db.schema.alterTable('guardrails').addColumn('rate_limit_interval_s', 'integer').execute();
      await db.schema.alterTable('guardrails').addColumn('rate_limit_tokens_per_minute', 'integer').execute();
    },
  };
}
