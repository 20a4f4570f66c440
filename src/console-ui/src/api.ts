/**
 * The console's only way to the gateway: the public `/api/v1` API, with the signed-in management key as the bearer.
 * The key lives in sessionStorage (this tab only; gone when the tab closes or on sign-out), never in localStorage.
 */
const KEY_SLOT = 'gateway.console.key';
const PLAYGROUND_SLOT = 'gateway.console.playground-key';
export const API = '/api/v1';

export function storedKey(): string | null {
  return sessionStorage.getItem(KEY_SLOT);
}
export function storeKey(key: string | null): void {
  if (key) sessionStorage.setItem(KEY_SLOT, key);
  else {
    sessionStorage.removeItem(KEY_SLOT);
    sessionStorage.removeItem(PLAYGROUND_SLOT);
  }
}
export function playgroundKey(): string | null {
  return sessionStorage.getItem(PLAYGROUND_SLOT);
}
export function storePlaygroundKey(key: string | null): void {
  if (key) sessionStorage.setItem(PLAYGROUND_SLOT, key);
  else sessionStorage.removeItem(PLAYGROUND_SLOT);
}

/** An error answered by the API: its status and the envelope's message (shown to the user as is). */
export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    public readonly body: unknown = null,
  ) {
    super(message);
  }
  /** The gateway has no such route: the feature is not on this gateway (yet). */
  get missingRoute(): boolean {
    return this.status === 404 && /^No route for /.test(this.message);
  }
}

let onUnauthorized: () => void = () => undefined;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

export async function request<T = any>(method: string, path: string, body?: unknown, key: string | null = storedKey()): Promise<T> {
  const headers: Record<string, string> = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, `The gateway did not answer (${(err as Error).message})`);
  }
  const text = await res.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = text;
  }
  if (!res.ok) {
    const message = parsed?.error?.message ?? (typeof parsed === 'string' && parsed ? parsed : `HTTP ${res.status}`);
    if (res.status === 401 && key === storedKey()) onUnauthorized();
    throw new ApiError(res.status, message, parsed);
  }
  return parsed as T;
}

export const get = <T = any>(path: string) => request<T>('GET', path);
export const post = <T = any>(path: string, body?: unknown) => request<T>('POST', path, body ?? {});
export const patch = <T = any>(path: string, body: unknown) => request<T>('PATCH', path, body);
export const put = <T = any>(path: string, body: unknown) => request<T>('PUT', path, body);
export const del = <T = any>(path: string) => request<T>('DELETE', path);

/** A query string from the set values of an object. */
export function qs(params: Record<string, string | number | boolean | null | undefined>): string {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
}

export interface Key {
  /** The numeric id a workspace's `io_logging_api_key_ids` lists. */
  id: number;
  hash: string;
  name: string;
  label: string;
  disabled: boolean;
  limit: number | null;
  limit_remaining: number | null;
  limit_reset: string | null;
  usage: number;
  usage_daily: number;
  usage_weekly: number;
  usage_monthly: number;
  created_at: string;
  expires_at: string | null;
  workspace_id: string;
  is_management_key: boolean;
  rate_limit: { requests: number; interval: string } | null;
}

export interface Workspace {
  id: string;
  name: string;
  slug: string;
  description: string | null;
  default_text_model: string | null;
  default_image_model: string | null;
  default_provider_sort: string | null;
  io_logging_api_key_ids: number[] | null;
  io_logging_sampling_rate: number;
  is_observability_broadcast_enabled: boolean;
  is_observability_io_logging_enabled: boolean;
  default_guardrail_id: string;
  created_at: string;
}

export interface Generation {
  id: string;
  request_id: string;
  created_at: string;
  model: string | null;
  requested_model: string | null;
  provider_name: string | null;
  api_type: string;
  streamed: boolean;
  cancelled: boolean;
  status: number;
  finish_reason: string | null;
  tokens_prompt: number;
  tokens_completion: number;
  total_cost: number;
  latency: number;
  time_to_first_token: number | null;
  session_id: string | null;
  workspace_id: string;
  api_key_hash: string;
  [more: string]: unknown;
}
