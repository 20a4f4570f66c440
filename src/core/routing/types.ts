/**
 * Routing types: the planner's input and output (public, re-exported by core/routing.ts), its constants, and the
 * working records the stages pass along (candidates grouped per requested model).
 */
import type { EndpointDef, ModelDef, ProviderDef } from '../catalog-types.js';
import type { ProviderPreferences, ProviderSortBy } from '../provider-prefs.js';

export interface PercentileStats {
  p50: number;
  p75?: number;
  p90?: number;
  p99?: number;
}

export interface EndpointHealth {
  /** Epoch ms of the last failed attempt. */
  lastFailureAt?: number;
  /** Failures since the last success; an explicit 0 means it recovered. */
  consecutiveFailures?: number;
  /** Time to first token, milliseconds. */
  latencyMs?: PercentileStats | null;
  /** Tokens per second. */
  throughput?: PercentileStats | null;
}

export interface RouteCatalog {
  models: Map<string, ModelDef>;
  endpointsByModel: Map<string, EndpointDef[]>;
  providers: Map<string, ProviderDef>;
}

export interface RouteInput {
  /** Epoch ms. */
  now: number;
  /** Returns a number in [0, 1). */
  rng: () => number;
  /** Requested model ids in order: `model` first then `models[]` (catalog ids). */
  models: string[];
  catalog: RouteCatalog;
  /** Endpoints whose provider has no credentials are not routable (`no_credentials`). */
  hasCredentials: (provider: ProviderDef) => boolean;
  health: (endpoint: EndpointDef) => EndpointHealth | undefined;
  /** Names of the request parameters present (`temperature`, `tools`, ...). */
  params: string[];
  provider?: ProviderPreferences;
  /** Workspace `default_provider_sort`; the request `sort` wins. */
  defaultSort?: ProviderSortBy | null;
  /** Account ignored providers (unioned with `ignore`). */
  orgIgnoredProviders?: string[];
  /** Account allowlist (the ceiling; intersected with `only`). null/empty = no ceiling. */
  orgAllowedProviders?: string[] | null;
  /** Account/guardrail policy, ORed with the request. */
  requireZdr?: boolean;
  denyDataCollection?: boolean;
  /**
   * Organization and guardrail policy (src/core/policy.ts `endpointVerdict`): the reason an endpoint is refused, or
   * undefined. Evaluated right after availability, so `/models/user` and routing apply the very same function.
   */
  endpointPolicy?: (endpoint: EndpointDef, provider: ProviderDef) => ExclusionReason | undefined;
  estimatedPromptTokens?: number;
  maxOutputTokens?: number;
  /** Session affinity: put this endpoint first if still healthy and allowed. */
  stickyEndpoint?: { model: string; tag: string };
  /** Default 30_000. */
  unhealthyWindowMs?: number;
  /**
   * The BYOK credentials this request may use (docs/byok.md): added around the shared endpoints that survived every
   * filter — prioritized ones first, fallback ones last (core/routing/byok.ts). `hasCredentials` is the operator's
   * shared keys only.
   */
  byok?: ByokRouting;
}

/** One BYOK credential as routing sees it (the secret stays in the service). */
export interface ByokRef {
  id: string;
  provider: string;
  /** Tried after the shared endpoints instead of before them. */
  isFallback: boolean;
  /** The provider's shared endpoints are not tried for this request ("always use this key"). */
  alwaysUse: boolean;
}

export interface ByokRouting {
  /** Whether some credential of the request serves this provider (its endpoints are then available). */
  has(provider: ProviderDef): boolean;
  /** The request's usable credentials for this provider and model, in `sort_order`. */
  credentials(provider: ProviderDef, model: string): readonly ByokRef[];
}

export interface Attempt {
  model: string;
  endpoint: EndpointDef;
  provider: ProviderDef;
  /** Set when the attempt runs on a BYOK credential instead of the operator's key. */
  byok?: ByokRef;
}

export type ExclusionReason =
  | 'model_not_found'
  | 'unknown_provider'
  | 'no_credentials'
  | 'allowed_providers'
  | 'ignored_providers'
  | 'only'
  | 'ignore'
  | 'data_policy:zdr'
  | 'data_policy:training'
  | 'data_policy:retention'
  | 'quantization'
  | 'max_price'
  | 'require_parameters'
  | 'context_length'
  | 'unsupported_parameter'
  | 'allow_fallbacks';

export interface ConsideredEndpoint {
  model: string;
  /** Provider slug ('' for an unknown model). */
  provider: string;
  /** Endpoint tag ('' for an unknown model). */
  tag: string;
  excluded?: ExclusionReason;
  /** Set on routable endpoints that failed within the unhealthy window (tried last). */
  unhealthy?: true;
}

export type RouteErrorCode =
  | 'invalid_request'
  | 'model_not_found'
  | 'no_endpoints'
  | 'constraint_filtered'
  | 'privacy_restricted'
  | 'all_unhealthy';

export interface RouteError {
  status: 400 | 404 | 503;
  code: RouteErrorCode;
  message: string;
  /** Distinct exclusion reasons, in first-seen order. */
  excluded_by?: string[];
  /** For `all_unhealthy`: ms until the first endpoint leaves the unhealthy window (Retry-After hint). */
  retry_after_ms?: number;
}

export interface RoutePlan {
  /** Try in this order; empty means `error` is set. */
  attempts: Attempt[];
  /** 'direct' | 'fallback' | 'order' | 'sticky' | 'sort:price' | 'sort:throughput' | 'sort:latency'. */
  strategy: string;
  /** Every endpoint of every requested model, with its exclusion reason. */
  considered: ConsideredEndpoint[];
  error?: RouteError;
}

// ---------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------

export const DEFAULT_UNHEALTHY_WINDOW_MS = 30_000;

/**
 * Default strategy: endpoints priced within this factor of the cheapest one form the
 * "cheap tier"; the first attempt is drawn from it with weight 1/price².
 */
export const CHEAP_TIER_FACTOR = 2;

/**
 * Request fields every endpoint accepts (handled by the gateway or the adapter), so
 * `require_parameters` never checks them. Everything else (sampling and feature
 * parameters) must appear in the endpoint's `supported_parameters`.
 */
export const UNIVERSAL_PARAMS: ReadonlySet<string> = new Set([
  'model', 'models', 'messages', 'prompt', 'input', 'stream', 'stream_options', 'provider', 'metadata',
  'user', 'session_id', 'preset', 'usage', 'transforms', 'trace', 'debug', 'plugins', 'route',
  'max_tokens', 'max_completion_tokens',
]);

/** Parameters that act as soft filters even without `require_parameters` (reference §7). */
export const SOFT_FILTER_PARAMS: readonly string[] = ['tools', 'tool_choice', 'response_format', 'verbosity'];

/** Evaluation order of the hard filters; also used to find which filter emptied a model. */
export const EXCLUSION_ORDER: readonly ExclusionReason[] = [
  'unknown_provider',
  'no_credentials',
  'allowed_providers',
  'ignored_providers',
  'only',
  'ignore',
  'data_policy:zdr',
  'data_policy:training',
  'data_policy:retention',
  'quantization',
  'max_price',
  'require_parameters',
  'context_length',
  'unsupported_parameter',
  'allow_fallbacks',
];

export const PRIVACY_REASONS: ReadonlySet<ExclusionReason> = new Set([
  'data_policy:zdr',
  'data_policy:training',
  'data_policy:retention',
]);
export const AVAILABILITY_REASONS: ReadonlySet<ExclusionReason> = new Set(['unknown_provider', 'no_credentials']);

/** One routable endpoint of a requested model, with what the sort needs. */
export interface Candidate {
  model: string;
  /** Position of the model among the requested models that exist. */
  modelIdx: number;
  /** Position of the endpoint in the catalog's list for the model. */
  catIdx: number;
  endpoint: EndpointDef;
  provider: ProviderDef;
  /** The endpoint's row in `considered` (exclusions and the unhealthy mark are written there). */
  row: ConsideredEndpoint;
  /** Blended prompt+completion USD/token; null = unknown. */
  price: number | null;
  health: EndpointHealth | undefined;
  unhealthy: boolean;
  /** Fails the soft latency/throughput preferences. */
  missesPrefs: boolean;
  /** Index of the first matching `order` entry; Infinity when not named. */
  orderIdx: number;
}

/** A requested model that exists, with its surviving candidates. */
export interface ModelState {
  model: string;
  idx: number;
  cands: Candidate[];
  /** Reasons of excluded endpoints, for error classification. */
  reasons: ExclusionReason[];
}
