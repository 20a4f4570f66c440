/** Migration 0021: tokens used per key and clock minute (token rate limits' seeds). Never edit an applied migration: add a new one. */
import type { Migration } from 'kysely';
import type { Db } from './types.js';

/**
 * What token rate limits counted (docs/spend.md, "Token rate limits"): per clock minute (`minute`: ms since the epoch /
 * 60,000, the minute the attempt reserved in) and key, the tokens its attempts settled. Written with the generation
 * records, read when a minute's counter is seeded (a restart, Redis lost mid-minute), only a few minutes kept. The
 * primary key (minute first) serves both the seed (`minute = ? and key_hash in (…)`) and the pruning.
 */
export function keyTokensMinute(): Migration {
  return {
    async up(db: Db) {
      await db.schema
        .createTable('key_tokens_minute')
        .addColumn('minute', 'integer', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull())
        .addColumn('tokens', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('key_tokens_minute_pk', ['minute', 'key_hash'])
        .execute();
    },
  };
}
