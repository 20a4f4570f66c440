/**
 * Bedrock credentials and request signing (docs/clouds.md). A Bedrock provider's key (the operator's, or a
 * workspace's BYOK credential) is one of:
 *
 * - an AWS key pair, `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, or JSON
 *   `{"access_key_id", "secret_access_key", "session_token"?, "region"?}` — requests are signed with Signature
 *   Version 4 (service `bedrock`) by AWS's own signer, `@smithy/signature-v4`;
 * - with `cloud.auth: api-key`, a Bedrock API key, sent as `Authorization: Bearer`.
 *
 * The region is the credential's, else `cloud.region`, else the one in the runtime host name
 * (`bedrock-runtime.<region>.amazonaws.com`); a credential of another region moves the request to its runtime host.
 */
import { createRequire } from 'node:module';
import type { UpstreamContext, UpstreamHttpRequest } from '../../core/adapters.js';
import type { ProviderDef } from '../../core/catalog-types.js';
import { UpstreamError } from '../../core/provider-errors.js';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  region?: string;
}

/**
 * AWS's signer (and the @smithy packages under it) is loaded by the first request signed, not at start-up: a gateway
 * without Bedrock keeps it out of the heap every full collection marks (docs/benchmark.md, "Megabyte bodies: a smaller
 * heap to mark").
 */
const requireLazily = createRequire(import.meta.url);

const refused = (why: string) => new UpstreamError(502, `Provider credentials are not usable: ${why}`, 'authentication', null, null);

/** Why a key is not a usable AWS credential (null when it is); the BYOK service validates keys with it. */
export function awsCredentialProblem(key: string): string | null {
  try {
    parseAwsCredentials(key);
    return null;
  } catch (err) {
    return (err as Error).message.replace(/^Provider credentials are not usable: /, '');
  }
}

export function parseAwsCredentials(key: string): AwsCredentials {
  const k = key.trim();
  if (k.startsWith('{')) {
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(k) as Record<string, unknown>;
    } catch {
      throw refused('the AWS credential is not valid JSON');
    }
    const id = j.access_key_id ?? j.accessKeyId;
    const secret = j.secret_access_key ?? j.secretAccessKey;
    if (typeof id !== 'string' || !id || typeof secret !== 'string' || !secret) throw refused('the AWS credential needs access_key_id and secret_access_key');
    const token = j.session_token ?? j.sessionToken;
    const region = j.region;
    if (region !== undefined && (typeof region !== 'string' || !/^[a-z]{2}(-gov)?-[a-z]+-\d$/.test(region))) throw refused('region must be an AWS region such as us-east-1');
    return { accessKeyId: id, secretAccessKey: secret, ...(typeof token === 'string' && token ? { sessionToken: token } : {}), ...(typeof region === 'string' ? { region } : {}) };
  }
  const parts = k.split(':');
  if (parts.length < 2 || parts.length > 3 || !parts[0] || !parts[1]) throw refused('an AWS credential is ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN] or JSON');
  return { accessKeyId: parts[0], secretAccessKey: parts[1], ...(parts[2] ? { sessionToken: parts[2] } : {}) };
}

/** The runtime hosts (`bedrock-runtime`, and `bedrock-agent-runtime` for Rerank), FIPS or not, with their region. */
const RUNTIME_HOST = /^bedrock-(agent-)?runtime(-fips)?\.([a-z0-9-]+)\.amazonaws\.com$/;

export function regionOf(provider: ProviderDef, url: URL, creds?: AwsCredentials): string {
  const r = creds?.region ?? provider.cloud?.region ?? RUNTIME_HOST.exec(url.hostname)?.[3];
  if (!r) throw refused('no AWS region: set cloud.region on the provider');
  return r;
}

/** Signs (SigV4) or bears (a Bedrock API key) a built request (Converse, InvokeModel, Rerank). */
export async function authorizeBedrock(req: UpstreamHttpRequest, ctx: UpstreamContext): Promise<UpstreamHttpRequest> {
  const key = ctx.apiKey;
  if (!key) throw refused('no key is configured');
  const headers = { ...req.headers };
  delete headers.authorization;
  if (ctx.provider.cloud?.auth === 'api-key') return { ...req, headers: { ...headers, authorization: `Bearer ${key}` } };
  const creds = parseAwsCredentials(key);
  const region = regionOf(ctx.provider, req.url, creds);
  const url = new URL(req.url);
  const host = RUNTIME_HOST.exec(url.hostname);
  if (host && host[3] !== region) url.hostname = `bedrock-${host[1] ?? ''}runtime${host[2] ?? ''}.${region}.amazonaws.com`;
  const { SignatureV4 } = requireLazily('@smithy/signature-v4') as typeof import('@smithy/signature-v4');
  const { Sha256 } = requireLazily('@aws-crypto/sha256-js') as typeof import('@aws-crypto/sha256-js');
  const signer = new SignatureV4({ service: 'bedrock', region, sha256: Sha256, credentials: { accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey, sessionToken: creds.sessionToken } });
  const query: Record<string, string> = {};
  url.searchParams.forEach((v, k) => (query[k] = v));
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    // The path as sent (model ids escaped once); the signer escapes it again for the canonical request, as AWS does.
    path: url.pathname,
    query,
    headers: { ...headers, host: url.host },
    body: req.body,
  });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(signed.headers)) if (k !== 'host') out[k] = String(v);
  return { url, headers: out, body: req.body };
}
