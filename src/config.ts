/**
 * Gateway configuration: environment variables over an optional YAML or JSON file (path in GATEWAY_CONFIG).
 * Validated once at start-up; every mistake is reported with the setting's name and the rule it breaks.
 * The shape is in config/types.ts, the file in config/file.ts, each section's settings in config/sections.ts.
 */
import { schemaProblems } from './core/catalog-schema.js';
import { ConfigFileSchema, FILE_KEYS, readFile } from './config/file.js';
import {
  Settings,
  consoleSetting,
  encryptionSettings,
  featureSettings,
  filesSettings,
  moderationSettings,
  observabilitySettings,
  serverSettings,
  spendSettings,
  upstreamSettings,
  videoSettings,
  workerCount,
} from './config/sections.js';
import { ConfigError, type GatewayConfig } from './config/types.js';

export * from './config/types.js';
export { DEFAULT_UPSTREAM_CONNECTIONS, parseOtlpHeaders } from './config/sections.js';

/** Build the configuration from an environment (defaults to process.env). Throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const problems: string[] = [];
  const file = env.GATEWAY_CONFIG ? readFile(env.GATEWAY_CONFIG, problems) : {};

  // Each problem names its key: `colour (config file) is not a known setting; known: …`.
  for (const p of schemaProblems(ConfigFileSchema, file, [], 'setting')) problems.push(p.replace(/^(\S+) /, '$1 (config file) '));

  // File values fill in what the environment leaves unset.
  const merged: Record<string, string | undefined> = { ...env };
  for (const [key, value] of Object.entries(file)) {
    const envName = FILE_KEYS[key];
    if (envName && merged[envName] === undefined && value !== null && typeof value !== 'object') merged[envName] = String(value);
  }

  // The sections are read in this order, so the problems are listed in it.
  const s = new Settings(merged, problems);
  const server = serverSettings(s);
  const video = videoSettings(s);
  const features = featureSettings(s);
  const spend = spendSettings(s);
  const encryption = encryptionSettings(s);
  const observability = observabilitySettings(s);
  const consoleOn = consoleSetting(s);
  const files = filesSettings(s);
  const moderation = moderationSettings(s);
  const upstream = upstreamSettings(s);
  const workers = workerCount(merged.GATEWAY_WORKERS, server.databaseUrl, server.redisUrl, problems);

  if (problems.length > 0) throw new ConfigError(problems);
  return { ...server, ...features, file, video, spend, encryption, observability, console: consoleOn, files, moderation, upstream, workers };
}
