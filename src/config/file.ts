/** The config file (path in GATEWAY_CONFIG): its accepted keys and sections, and its reading. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import { RULE } from '../core/catalog-schema.js';

/** Keys accepted in the config file, mapped to their environment variable. */
export const FILE_KEYS: Record<string, string> = {
  port: 'PORT',
  host: 'HOST',
  database_url: 'GATEWAY_DATABASE_URL',
  redis_url: 'GATEWAY_REDIS_URL',
  admin_key: 'GATEWAY_ADMIN_KEY',
  admin_email: 'GATEWAY_ADMIN_EMAIL',
  log_level: 'GATEWAY_LOG_LEVEL',
  body_limit: 'GATEWAY_BODY_LIMIT',
  heap_growing_percent: 'GATEWAY_HEAP_GROWING_PERCENT',
  key_cache_ttl_ms: 'GATEWAY_KEY_CACHE_TTL_MS',
  shutdown_grace_ms: 'GATEWAY_SHUTDOWN_GRACE_MS',
  stream_keepalive_ms: 'GATEWAY_STREAM_KEEPALIVE_MS',
  session_ttl_ms: 'GATEWAY_SESSION_TTL_MS',
  record_flush_ms: 'GATEWAY_RECORD_FLUSH_MS',
  upstream_max_bytes: 'GATEWAY_UPSTREAM_MAX_BYTES',
  default_catalog: 'GATEWAY_DEFAULT_CATALOG',
  unknown_model_fallback: 'GATEWAY_UNKNOWN_MODEL_FALLBACK',
  reasoning_secret: 'GATEWAY_REASONING_SECRET',
  video_worker: 'GATEWAY_VIDEO_WORKER',
  video_poll_ms: 'GATEWAY_VIDEO_POLL_MS',
  video_lease_ms: 'GATEWAY_VIDEO_LEASE_MS',
  video_job_timeout_ms: 'GATEWAY_VIDEO_JOB_TIMEOUT_MS',
  webhook_secret: 'GATEWAY_WEBHOOK_SECRET',
  webhook_max_attempts: 'GATEWAY_WEBHOOK_MAX_ATTEMPTS',
  webhook_retry_ms: 'GATEWAY_WEBHOOK_RETRY_MS',
  video_allow_loopback_callbacks: 'GATEWAY_VIDEO_ALLOW_LOOPBACK_CALLBACKS',
  metrics: 'GATEWAY_METRICS',
  console: 'GATEWAY_CONSOLE',
  web_search_url: 'GATEWAY_WEB_SEARCH_URL',
  web_search_engine: 'GATEWAY_WEB_SEARCH_ENGINE',
  web_search_api_key: 'GATEWAY_WEB_SEARCH_API_KEY',
  web_fetch: 'GATEWAY_WEB_FETCH',
  web_fetch_allow_private: 'GATEWAY_WEB_FETCH_ALLOW_PRIVATE',
  migrate: 'GATEWAY_MIGRATE',
  credits: 'GATEWAY_CREDITS',
  spend_redis_down: 'GATEWAY_SPEND_REDIS_DOWN',
  spend_heartbeat_ttl_ms: 'GATEWAY_SPEND_HEARTBEAT_TTL_MS',
  encryption_key: 'GATEWAY_ENCRYPTION_KEY',
  encryption_key_previous: 'GATEWAY_ENCRYPTION_KEY_PREVIOUS',
  files_dir: 'GATEWAY_FILES_DIR',
  files_quota_bytes: 'GATEWAY_FILES_QUOTA_BYTES',
  files_s3_bucket: 'GATEWAY_FILES_S3_BUCKET',
  files_s3_endpoint: 'GATEWAY_FILES_S3_ENDPOINT',
  files_s3_region: 'GATEWAY_FILES_S3_REGION',
  files_s3_prefix: 'GATEWAY_FILES_S3_PREFIX',
  files_s3_force_path_style: 'GATEWAY_FILES_S3_FORCE_PATH_STYLE',
  moderation_url: 'GATEWAY_MODERATION_URL',
  moderation_api_key: 'GATEWAY_MODERATION_API_KEY',
  moderation_model: 'GATEWAY_MODERATION_MODEL',
  upstream_connections: 'GATEWAY_UPSTREAM_CONNECTIONS',
  upstream_http2: 'GATEWAY_UPSTREAM_HTTP2',
  workers: 'GATEWAY_WORKERS',
  io_log_retention_days: 'GATEWAY_IO_LOG_RETENTION_DAYS',
  io_log_max_bytes: 'GATEWAY_IO_LOG_MAX_BYTES',
  broadcast_allow_loopback: 'GATEWAY_BROADCAST_ALLOW_LOOPBACK',
  broadcast_max_attempts: 'GATEWAY_BROADCAST_MAX_ATTEMPTS',
  broadcast_retry_ms: 'GATEWAY_BROADCAST_RETRY_MS',
  broadcast_timeout_ms: 'GATEWAY_BROADCAST_TIMEOUT_MS',
};
/**
 * Sections of the file read by other modules, which validate them: `providers`, `models` and `endpoints` against the
 * catalog schema (core/catalog-schema.ts) when the catalog is built, the others by their own modules.
 */
const FILE_SECTIONS = ['providers', 'models', 'endpoints', 'routing', 'timeouts', 'organization', 'limits'];

/** The top level of the config file: scalar settings and the sections. */
export const ConfigFileSchema = Type.Object(
  {
    ...Object.fromEntries(Object.keys(FILE_KEYS).map((k) => [k, Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()], { [RULE]: 'must be a scalar value' }))])),
    ...Object.fromEntries(FILE_SECTIONS.map((k) => [k, Type.Optional(Type.Unknown())])),
  },
  { additionalProperties: false },
);

export function readFile(path: string, problems: string[]): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (err) {
    problems.push(`GATEWAY_CONFIG: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    return {};
  }
  try {
    const parsed: unknown = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    if (parsed == null) return {};
    if (typeof parsed !== 'object' || Array.isArray(parsed)) {
      problems.push(`GATEWAY_CONFIG: ${path} must contain a mapping at the top level`);
      return {};
    }
    return parsed as Record<string, unknown>;
  } catch (err) {
    problems.push(`GATEWAY_CONFIG: ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML'}: ${(err as Error).message.split('\n')[0]}`);
    return {};
  }
}
