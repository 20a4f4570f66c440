/**
 * Google Cloud service-account authentication (docs/clouds.md), without a client library: the OAuth 2.0 JWT bearer
 * flow (RFC 7523; https://developers.google.com/identity/protocols/oauth2/service-account#httprest). A JWT assertion
 * (RS256, signed with the account's private key by node:crypto) is exchanged at the token endpoint for an access token,
 * kept in memory until a minute before it expires and then refreshed (one exchange at a time per account).
 *
 * The token endpoint is Google's (`https://oauth2.googleapis.com/token`) unless the operator sets the provider's
 * `cloud.token_url` (tests point it at the simulator); a key's own `token_uri` is not followed.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { UpstreamError } from '../../core/provider-errors.js';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Tokens are refreshed this long before they expire. */
const REFRESH_MARGIN_MS = 60_000;
const TOKEN_TIMEOUT_MS = 10_000;

export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  project_id?: string;
}

const refused = (why: string, raw: unknown = null) => new UpstreamError(502, `Provider credentials are not usable: ${why}`, 'authentication', null, raw);

const parsed = new Map<string, ServiceAccount>();

/** A service-account key file (JSON) as the gateway uses it; throws UpstreamError (authentication) when it is not one. */
export function parseServiceAccount(key: string): ServiceAccount {
  const hit = parsed.get(key);
  if (hit) return hit;
  let j: Record<string, unknown>;
  try {
    j = JSON.parse(key) as Record<string, unknown>;
  } catch {
    throw refused('a Google service account key is the JSON key file');
  }
  if (j.type !== undefined && j.type !== 'service_account') throw refused(`the key file is of type ${String(j.type)}, not service_account`);
  if (typeof j.client_email !== 'string' || !j.client_email.includes('@')) throw refused('the key file has no client_email');
  if (typeof j.private_key !== 'string') throw refused('the key file has no private_key');
  try {
    createPrivateKey(j.private_key);
  } catch {
    throw refused('the private_key is not a PEM private key');
  }
  const sa: ServiceAccount = { client_email: j.client_email, private_key: j.private_key };
  if (typeof j.private_key_id === 'string') sa.private_key_id = j.private_key_id;
  if (typeof j.project_id === 'string') sa.project_id = j.project_id;
  if (parsed.size > 1000) parsed.clear();
  parsed.set(key, sa);
  return sa;
}

/** Why a key is not a usable service account (null when it is); the BYOK service validates keys with it. */
export function serviceAccountProblem(key: string): string | null {
  try {
    parseServiceAccount(key);
    return null;
  } catch (err) {
    return (err as Error).message.replace(/^Provider credentials are not usable: /, '');
  }
}

const b64url = (v: string | Buffer) => Buffer.from(v).toString('base64url');

/** The signed JWT assertion of a token request. */
export function assertion(sa: ServiceAccount, tokenUrl: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', ...(sa.private_key_id ? { kid: sa.private_key_id } : {}) }));
  const claims = b64url(JSON.stringify({ iss: sa.client_email, scope: CLOUD_PLATFORM_SCOPE, aud: tokenUrl, iat, exp: iat + 3600 }));
  const signature = sign('RSA-SHA256', Buffer.from(`${header}.${claims}`), sa.private_key);
  return `${header}.${claims}.${b64url(signature)}`;
}

interface Cached {
  token: string;
  expiresAt: number;
}

const tokens = new Map<string, Cached>();
const pending = new Map<string, Promise<Cached>>();

/** Exchanges made so far (tests and metrics read it: a cached token makes none). */
export const tokenExchanges = { count: 0 };

async function exchange(sa: ServiceAccount, tokenUrl: string, now: () => number): Promise<Cached> {
  tokenExchanges.count++;
  const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: assertion(sa, tokenUrl, now()) });
  let res: Response;
  try {
    res = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body, signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) });
  } catch (err) {
    throw new UpstreamError(502, `Provider token endpoint unreachable: ${(err as Error).message}`, 'provider_unavailable', null, null);
  }
  const text = await res.text();
  let j: Record<string, unknown> = {};
  try {
    j = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  if (!res.ok || typeof j.access_token !== 'string') {
    const why = typeof j.error_description === 'string' ? j.error_description : typeof j.error === 'string' ? j.error : `HTTP ${res.status}`;
    throw refused(`the token endpoint refused the service account (${why})`, j);
  }
  const ttl = typeof j.expires_in === 'number' && j.expires_in > 0 ? j.expires_in : 3600;
  return { token: j.access_token, expiresAt: now() + ttl * 1000 };
}

/** An access token for the account: cached, refreshed before it expires, one exchange at a time. */
export async function accessToken(sa: ServiceAccount, tokenUrl: string, now: () => number = Date.now): Promise<string> {
  const id = createHash('sha256').update(`${sa.client_email}|${tokenUrl}|${sa.private_key}`).digest('hex');
  const hit = tokens.get(id);
  if (hit && hit.expiresAt - REFRESH_MARGIN_MS > now()) return hit.token;
  let p = pending.get(id);
  if (!p) {
    p = exchange(sa, tokenUrl, now).finally(() => pending.delete(id));
    pending.set(id, p);
  }
  const got = await p;
  if (tokens.size > 1000) tokens.clear();
  tokens.set(id, got);
  return got.token;
}
