/**
 * Google Vertex AI (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest): the OAuth token endpoint of
 * the service-account flow, and the model calls that need its tokens.
 *
 *   POST /token   grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<RS256 JWT>
 *                 → {access_token, expires_in, token_type}; the JWT is verified with the public key of its issuer
 *                 (`trustServiceAccount`), its audience, iat/exp and scope checked (else `invalid_grant`)
 *   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent | :streamGenerateContent
 *   POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict
 *
 * Model calls need `Authorization: Bearer <a token issued here, not expired>` (else Google's 401 UNAUTHENTICATED);
 * Gemini bodies are answered as the Gemini simulator does, Anthropic bodies (with `anthropic_version:
 * vertex-2023-10-16`, the model in the URL) as the Anthropic one does. The `tokenExpiresIn` knob (seconds, on the
 * token endpoint's provider prefix) shortens the tokens' life. Trust and tokens are shared by the simulators of one
 * process (test helpers).
 */
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { anthropicProtocol, messages } from './anthropic.js';
import { generateContent, geminiProtocol } from './gemini.js';
import type { Endpoint, EndpointContext, JsonReply, Protocol, Reply } from './protocol.js';

const trusted = new Map<string, string>();
const issued = new Map<string, number>();

/** Lets the simulator verify JWTs of this service account (its public key, PEM). */
export function trustServiceAccount(clientEmail: string, publicKeyPem: string): void {
  createPublicKey(publicKeyPem);
  trusted.set(clientEmail, publicKeyPem);
}

const JSON_HEADERS = { 'content-type': 'application/json' };

const tokenProtocol: Protocol = {
  name: 'google-oauth',
  error(status, _ctx, info) {
    return { kind: 'json', status, body: JSON.stringify({ error: info?.code ?? (status >= 500 ? 'internal_failure' : 'invalid_request'), error_description: info?.message ?? `Simulated error (HTTP ${status}).` }), headers: JSON_HEADERS };
  },
  streamError() {
    return { data: '{}' };
  },
};

const grantError = (ctx: EndpointContext, description: string): JsonReply => tokenProtocol.error(400, ctx, { code: 'invalid_grant', message: description });

function token(ctx: EndpointContext): Reply {
  const form = new URLSearchParams(ctx.rawBody ?? '');
  if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return tokenProtocol.error(400, ctx, { code: 'unsupported_grant_type', message: 'Invalid grant_type: ' + (form.get('grant_type') ?? '') });
  const jwt = form.get('assertion') ?? '';
  const parts = jwt.split('.');
  if (parts.length !== 3) return grantError(ctx, 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.');
  let header: Record<string, unknown>;
  let claims: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as Record<string, unknown>;
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return grantError(ctx, 'Invalid JWT: not JSON.');
  }
  if (header.alg !== 'RS256') return grantError(ctx, 'Invalid JWT: alg must be RS256.');
  const key = typeof claims.iss === 'string' ? trusted.get(claims.iss) : undefined;
  if (!key) return tokenProtocol.error(401, ctx, { code: 'invalid_client', message: 'The OAuth client was not found.' });
  if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), key, Buffer.from(parts[2], 'base64url'))) return grantError(ctx, 'Invalid JWT Signature.');
  const now = Math.floor(Date.now() / 1000);
  const iat = Number(claims.iat);
  const exp = Number(claims.exp);
  if (!(iat <= now + 300 && exp > now && exp - iat <= 3600)) return grantError(ctx, 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
  if (typeof claims.aud !== 'string' || !claims.aud.endsWith(ctx.fullPath ?? ctx.path)) return grantError(ctx, 'Invalid JWT: the audience is not this token endpoint.');
  if (typeof claims.scope !== 'string' || claims.scope.trim() === '') return tokenProtocol.error(400, ctx, { code: 'invalid_scope', message: 'Invalid OAuth scope or ID token audience provided.' });
  const ttl = ctx.knobs.tokenExpiresIn ?? 3599;
  const accessToken = `ya29.sim-${randomBytes(12).toString('base64url')}`;
  if (issued.size > 10_000) issued.clear();
  issued.set(accessToken, Date.now() + ttl * 1000);
  return { kind: 'json', status: 200, body: JSON.stringify({ access_token: accessToken, expires_in: ttl, token_type: 'Bearer' }), headers: JSON_HEADERS };
}

function unauthenticated(ctx: EndpointContext, protocol: Protocol): JsonReply | undefined {
  const m = /^Bearer (\S+)$/.exec(typeof ctx.headers.authorization === 'string' ? ctx.headers.authorization : '');
  const until = m ? issued.get(m[1]) : undefined;
  if (until !== undefined && until > Date.now()) return undefined;
  const message = 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.';
  const body = JSON.stringify({ error: { code: 401, message, status: 'UNAUTHENTICATED', details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_TYPE_UNSUPPORTED', domain: 'googleapis.com' }] } });
  void protocol;
  return { kind: 'json', status: 401, body, headers: { ...JSON_HEADERS, 'www-authenticate': 'Bearer realm="https://accounts.google.com/"' } };
}

const GEMINI = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+)(?::|%3A)(generateContent|streamGenerateContent)$/;
const ANTHROPIC = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+)(?::|%3A)(rawPredict|streamRawPredict)$/;

function gemini(ctx: EndpointContext): Reply {
  const denied = unauthenticated(ctx, geminiProtocol);
  if (denied) return denied;
  const m = GEMINI.exec(ctx.path)!;
  return generateContent({ ...ctx, path: `/v1beta/models/${m[3]}:${m[4]}` });
}

function anthropic(ctx: EndpointContext): Reply {
  const denied = unauthenticated(ctx, anthropicProtocol);
  if (denied) return denied;
  const m = ANTHROPIC.exec(ctx.path)!;
  const body = ctx.body as Record<string, unknown> | undefined;
  if (!body || body.anthropic_version !== 'vertex-2023-10-16') {
    return anthropicProtocol.error(400, ctx, { message: "anthropic_version: Input should be 'vertex-2023-10-16'", type: 'invalid_request_error' });
  }
  if (body.model !== undefined) return anthropicProtocol.error(400, ctx, { message: 'model: Extra inputs are not permitted (the model is in the URL)', type: 'invalid_request_error' });
  const { anthropic_version: _v, ...rest } = body;
  void _v;
  // On Vertex the API version is the body's `anthropic_version`: the Messages simulator is given it as its header.
  return messages({ ...ctx, headers: { ...ctx.headers, 'anthropic-version': '2023-06-01' }, body: { ...rest, model: decodeURIComponent(m[3]), stream: m[4] === 'streamRawPredict' } });
}

export const vertexEndpoints: Endpoint[] = [
  { method: 'POST', path: '/token', protocol: tokenProtocol, modelCall: false, handle: token },
  { method: 'POST', path: GEMINI, protocol: geminiProtocol, modelCall: true, handle: gemini },
  { method: 'POST', path: ANTHROPIC, protocol: anthropicProtocol, modelCall: true, handle: anthropic },
];
