/**
 * AWS Signature Version 4, checked the way AWS checks it
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html), written here from the
 * specification with node:crypto — independent of the signer the gateway uses (`@smithy/signature-v4`), so a test
 * passing means the gateway's requests carry signatures AWS would accept.
 *
 * Simulated credentials: an access key id `AKIDSIM…` (any suffix) has the secret access key `simsecret/<access key
 * id>`; other ids are unknown (`UnrecognizedClientException`).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

export const simSecretFor = (accessKeyId: string): string | null => (/^AKIDSIM[A-Z0-9]*$/.test(accessKeyId) ? `simsecret/${accessKeyId}` : null);

export interface SigV4Failure {
  status: number;
  type: string;
  message: string;
}

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/;
const MAX_SKEW_MS = 15 * 60_000;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const hmac = (key: Buffer | string, s: string) => createHmac('sha256', key).update(s, 'utf8').digest();

/** RFC 3986 percent-encoding of everything but the unreserved characters, as SigV4 wants. */
export function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function canonicalQuery(query: string): string {
  if (!query) return '';
  const pairs = query.split('&').filter(Boolean).map((kv) => {
    const i = kv.indexOf('=');
    const k = decodeURIComponent((i === -1 ? kv : kv.slice(0, i)).replace(/\+/g, ' '));
    const v = i === -1 ? '' : decodeURIComponent(kv.slice(i + 1).replace(/\+/g, ' '));
    return [uriEncode(k), uriEncode(v)] as const;
  });
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

function headerValue(h: IncomingHttpHeaders, name: string): string | undefined {
  const v = h[name];
  if (v === undefined) return undefined;
  return (Array.isArray(v) ? v.join(',') : String(v)).trim().replace(/\s+/g, ' ');
}

/** Checks a request's SigV4 signature for `service`; null when it is valid. */
export function verifySigV4(req: { method: string; path: string; query: string; headers: IncomingHttpHeaders; body: string }, service: string, now = Date.now()): SigV4Failure | null {
  const auth = headerValue(req.headers, 'authorization');
  if (!auth) return { status: 403, type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const m = AUTH.exec(auth);
  if (!m) return { status: 400, type: 'IncompleteSignatureException', message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters. Authorization=${auth.split(' ')[0]}` };
  const [, accessKeyId, date, region, svc, signedHeaders, signature] = m;
  const secret = simSecretFor(accessKeyId);
  if (!secret) return { status: 403, type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (svc !== service) return { status: 403, type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
  const amzDate = headerValue(req.headers, 'x-amz-date');
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) return { status: 403, type: 'InvalidSignatureException', message: 'Missing or malformed X-Amz-Date header' };
  const at = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (Math.abs(now - at) > MAX_SKEW_MS) return { status: 403, type: 'InvalidSignatureException', message: `Signature expired: ${amzDate} is now earlier than the allowed window.` };
  if (amzDate.slice(0, 8) !== date) return { status: 403, type: 'InvalidSignatureException', message: 'Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP' };
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-amz-date')) return { status: 403, type: 'InvalidSignatureException', message: "'Host' and 'X-Amz-Date' must be signed headers." };
  if (req.headers['x-amz-security-token'] !== undefined && !names.includes('x-amz-security-token')) return { status: 403, type: 'InvalidSignatureException', message: 'X-Amz-Security-Token must be signed.' };
  const payloadHash = sha256(req.body);
  const declared = headerValue(req.headers, 'x-amz-content-sha256');
  if (declared !== undefined && declared !== payloadHash && declared !== 'UNSIGNED-PAYLOAD') return { status: 400, type: 'XAmzContentSHA256Mismatch', message: 'The provided x-amz-content-sha256 header does not match what was computed.' };

  // Non-S3 services encode the (already encoded) path once more, segment by segment.
  const canonicalUri = req.path.split('/').map(uriEncode).join('/') || '/';
  const canonicalHeaders = names.map((n) => `${n}:${headerValue(req.headers, n) ?? ''}\n`).join('');
  const canonicalRequest = [req.method, canonicalUri, canonicalQuery(req.query), canonicalHeaders, signedHeaders, declared ?? payloadHash].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  const expected = createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) {
    return { status: 403, type: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.' };
  }
  return null;
}
