/**
 * Stage 8, BYOK (docs/byok.md; reference notes §12): the planned endpoints, each served on the request's own provider
 * credentials and on the operator's shared key, in the hosted router's order —
 *
 *   prioritized BYOK credentials (plan order, then `sort_order`) → shared endpoints → fallback BYOK credentials.
 *
 * A provider with an "always use" credential for the model has no shared attempt. Data-policy, ZDR and every other
 * filter ran before (the planned list), so a credential never brings back an excluded endpoint.
 */
import type { ProviderDef } from '../catalog-types.js';
import type { Attempt, ByokRouting } from './types.js';

export function withByok(list: readonly Attempt[], byok: ByokRouting | undefined, shared: (p: ProviderDef) => boolean): Attempt[] {
  if (!byok) return [...list];
  const first: Attempt[] = [];
  const middle: Attempt[] = [];
  const last: Attempt[] = [];
  for (const a of list) {
    const creds = byok.credentials(a.provider, a.model);
    for (const c of creds) (c.isFallback ? last : first).push({ ...a, byok: c });
    if (shared(a.provider) && !creds.some((c) => c.alwaysUse)) middle.push(a);
  }
  return [...first, ...middle, ...last];
}
