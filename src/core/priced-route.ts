/**
 * A route catalog seen through other prices, for the APIs whose unit is not a token: a per-image or per-character
 * price counts as a request or prompt price when endpoints are ranked and `max_price` is checked, while billing uses
 * each endpoint as the catalog has it. Pure: no I/O.
 */
import type { EndpointDef, Pricing } from './catalog-types.js';
import type { RouteCatalog } from './routing.js';

export interface PricedRoute {
  /** The catalog whose endpoints carry the folded prices (what planRoute ranks). */
  route: RouteCatalog;
  /** The endpoint as the catalog has it, for an endpoint of `route` (or the endpoint itself when it is not one). */
  original(e: EndpointDef): EndpointDef;
}

/** `fold` gives an endpoint's prices as routing should see them, or null to keep them as they are. */
export function pricedRoute(src: RouteCatalog, fold: (p: Pricing) => Pricing | null): PricedRoute {
  const originals = new Map<EndpointDef, EndpointDef>();
  const endpointsByModel = new Map<string, EndpointDef[]>();
  for (const [model, list] of src.endpointsByModel) {
    endpointsByModel.set(
      model,
      list.map((e) => {
        const folded = e.pricing ? fold(e.pricing) : null;
        const view = folded ? { ...e, pricing: folded } : { ...e };
        originals.set(view, e);
        return view;
      }),
    );
  }
  return {
    route: { models: src.models, providers: src.providers, endpointsByModel },
    original: (e) => originals.get(e) ?? e,
  };
}
