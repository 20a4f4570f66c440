/**
 * Versioned schema migrations, shared by SQLite and PostgreSQL. Column types differ per dialect
 * (timestamps, JSON, booleans); everything else is one definition. Never edit an applied migration: add a new one.
 * The migrations live in files by number range; this module lists them in order.
 */
import type { Migration } from 'kysely';
import { columnTypes, type Dialect } from './types.js';
import { m0001 } from './0001-init.js';
import { m0002, m0003, m0004, m0005, m0006, m0007 } from './0002-0007.js';
import { spendMoney } from './0008-spend-money.js';
import { generationDeadLetters, guardrailContentFilters, keyTokenRateLimits, modelAliases, observeGenerationFeedback, serverSecrets } from './0009-0014.js';
import { byokCredentials, files, observeIoContent, observeRollups } from './0015-0018.js';
import { videoByok } from './0019-video-byok.js';
import { guardrailRateLimits } from './0020-guardrail-rate-limits.js';
import { keyTokensMinute } from './0021-key-tokens-minute.js';

export { columnTypes, type ColumnTypes, type Dialect } from './types.js';
export { MONEY_COLUMNS } from './0008-spend-money.js';
/** All migrations, in order. Names sort lexically in application order. */
export function migrations(dialect: Dialect): Record<string, Migration> {
  const t = columnTypes(dialect);
  return {
    '0001_init': m0001(t),
    '0002_generations': m0002(t),
    '0003_guardrails': m0003(t),
    '0004_videos': m0004(t),
    '0005_key_rate_limits': m0005(),
    '0006_video_reservations': m0006(t),
    '0007_workspace_members': m0007(t),
    '0008_spend_exact_money_credits_budgets': spendMoney(dialect, t),
    '0009_generation_dead_letters': generationDeadLetters(t),
    '0010_model_aliases': modelAliases(t),
    '0011_server_secrets': serverSecrets(),
    '0012_observe_generation_feedback': observeGenerationFeedback(t),
    '0013_guardrail_content_filters': guardrailContentFilters(t),
    '0014_key_token_rate_limits': keyTokenRateLimits(),
    '0015_observe_io_content': observeIoContent(t),
    '0016_observe_rollups_destinations': observeRollups(dialect, t),
    '0017_byok_credentials': byokCredentials(t),
    '0018_files_and_generation_pipeline': files(t),
    '0019_video_byok': videoByok(),
    '0020_guardrail_rate_limits': guardrailRateLimits(),
    '0021_key_tokens_minute': keyTokensMinute(),
  };
}
