/**
 * The Messages skin's thinking signatures (core/reasoning-signature.ts): the gateway's key, set once at start-up, and
 * the signature a thinking block gets on the way out.
 */
import { signReasoning } from '../core/reasoning-signature.js';

// ---- reasoning signatures ----------------------------------------------------------------------------------------

/** The key of the gateway's thinking signatures (core/reasoning-signature.ts), set once at start-up. */
let signingKey: Buffer | null = null;

/** The key set at start-up (null before). */
export const reasoningKey = (): Buffer | null => signingKey;

export function useReasoningKey(key: Buffer): void {
  signingKey = key;
}

/** Whether a signature is one Anthropic can verify: Anthropic's own, or of unknown origin (passed as it came). */
const anthropicSigned = (signature: string | undefined, origin: string | undefined): signature is string => !!signature && (origin === undefined || origin === 'anthropic');

/**
 * A thinking block's signature: the upstream's when Anthropic can verify it, else the gateway's own — for thinking no
 * upstream signed and for another provider's signed thinking (a Gemini thoughtSignature), which Claude Code would
 * otherwise send on to Anthropic (empty only before start-up set a key).
 */
export function signatureOf(text: string, signature: string | undefined, origin?: string): string {
  if (anthropicSigned(signature, origin)) return signature;
  if (!signingKey) return '';
  // Another provider's signature rides inside the gateway's, for that provider only.
  return signature && origin ? signReasoning(signingKey, text, { origin, signature }) : signReasoning(signingKey, text);
}
