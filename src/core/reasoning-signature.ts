/**
 * Signatures the gateway puts on reasoning ("thinking") that no upstream signed (docs/agents.md, "Reasoning round
 * trips"): Anthropic's Messages API wants a signature on every thinking block a client sends back (Claude Code sends
 * its whole history), so thinking produced by an OpenAI, Gemini or Responses upstream leaves the gateway with
 * `gwsig1.<HMAC-SHA256 over the thinking text, base64url>`, keyed by the server's reasoning secret. Coming back, such a
 * block is verified (a wrong one is refused) and sent on without the signature (to Anthropic upstreams it is left
 * out: Anthropic verifies its own signatures only). Real Anthropic signatures never start with the prefix and pass
 * untouched. Pure (HMAC only).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const GATEWAY_SIGNATURE_PREFIX = 'gwsig1.';

const mac = (key: Buffer, text: string): Buffer => createHmac('sha256', key).update('thinking\n').update(text).digest();

/** Another provider's signature carried inside the gateway's (a Gemini thoughtSignature on the Messages API). */
export interface CarriedSignature {
  origin: string;
  signature: string;
}

const carriedMac = (key: Buffer, text: string, c: CarriedSignature): Buffer =>
  createHmac('sha256', key).update('thinking+carried\n').update(c.origin).update('\n').update(c.signature).update('\n').update(text).digest();

/**
 * The gateway's signature of a thinking text: `gwsig1.<mac>`; with `carried`, another provider's signature rides
 * inside, covered by the MAC: `gwsig1.<mac>.<origin>.<signature>` (re-signed like any foreign thinking, so that the
 * client can send it back, and the signature goes on to its own provider only).
 */
export function signReasoning(key: Buffer, text: string, carried?: CarriedSignature): string {
  if (!carried) return GATEWAY_SIGNATURE_PREFIX + mac(key, text).toString('base64url');
  return `${GATEWAY_SIGNATURE_PREFIX}${carriedMac(key, text, carried).toString('base64url')}.${carried.origin}.${carried.signature}`;
}

/** A gateway signature checked (constant time): whether it is valid for `text`, and the signature it carries, if any. */
export function openReasoning(key: Buffer, text: string, signature: string): { valid: boolean; carried?: CarriedSignature } {
  if (!isGatewaySignature(signature)) return { valid: false };
  const rest = signature.slice(GATEWAY_SIGNATURE_PREFIX.length);
  const dot = rest.indexOf('.');
  if (dot === -1) return { valid: verifyReasoning(key, text, signature) };
  const dot2 = rest.indexOf('.', dot + 1);
  if (dot2 === -1) return { valid: false };
  const carried = { origin: rest.slice(dot + 1, dot2), signature: rest.slice(dot2 + 1) };
  const given = Buffer.from(rest.slice(0, dot), 'base64url');
  const want = carriedMac(key, text, carried);
  return given.length === want.length && timingSafeEqual(given, want) ? { valid: true, carried } : { valid: false };
}

/** Whether a signature is the gateway's own (else it is the upstream's, passed untouched). */
export const isGatewaySignature = (signature: unknown): signature is string => typeof signature === 'string' && signature.startsWith(GATEWAY_SIGNATURE_PREFIX);

/** Whether `signature` is the gateway's signature of `text` under `key` (constant time). */
export function verifyReasoning(key: Buffer, text: string, signature: string): boolean {
  if (!isGatewaySignature(signature)) return false;
  const given = Buffer.from(signature.slice(GATEWAY_SIGNATURE_PREFIX.length), 'base64url');
  const want = mac(key, text);
  return given.length === want.length && timingSafeEqual(given, want);
}

/** The HMAC key of a configured or stored secret (never the secret itself, so that one secret can serve two uses). */
export function reasoningKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('gateway reasoning signatures v1').digest();
}
