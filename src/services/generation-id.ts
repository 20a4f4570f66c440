/** Generation ids: every answered (or refused) inference request's record, and the id its client sees. */
import { randomBytes } from 'node:crypto';

/** A random per-process prefix and a counter: unique across instances, and cheap on the hot path. */
const GEN_PREFIX = randomBytes(9).toString('base64url');
let genCounter = 0;

export function newGenerationId(): string {
  genCounter = (genCounter + 1) % 0x7fffffff;
  return `gen-${Math.floor(Date.now() / 1000)}-${GEN_PREFIX}${genCounter.toString(36)}`;
}
