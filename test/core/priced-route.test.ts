import { describe, expect, it } from 'vitest';
import { pricedRoute } from '../../src/core/priced-route.js';
import type { EndpointDef } from '../../src/core/catalog-types.js';
import type { RouteCatalog } from '../../src/core/routing.js';

const ep = (provider: string, pricing: EndpointDef['pricing']): EndpointDef => ({ provider, pricing }) as unknown as EndpointDef;

describe('pricedRoute', () => {
  const perImage = ep('a', { prompt: '0', completion: '0', image_output: '0.04' } as EndpointDef['pricing']);
  const perToken = ep('b', { prompt: '0.000001', completion: '0.000002' } as EndpointDef['pricing']);
  const src = { models: new Map(), providers: new Map(), endpointsByModel: new Map([['m', [perImage, perToken]]]) } as unknown as RouteCatalog;
  const priced = pricedRoute(src, (p) => (p.image_output ? { ...p, request: p.image_output } : null));

  it('folds the prices routing sees and leaves the catalog as it was', () => {
    const [a, b] = priced.route.endpointsByModel.get('m')!;
    expect(a.pricing).toMatchObject({ request: '0.04', image_output: '0.04' });
    expect(perImage.pricing).not.toHaveProperty('request');
    expect(b.pricing).toEqual(perToken.pricing);
    expect(b).not.toBe(perToken);
  });

  it('maps each routed endpoint back to the catalog one (billing), and any other endpoint to itself', () => {
    const [a, b] = priced.route.endpointsByModel.get('m')!;
    expect(priced.original(a)).toBe(perImage);
    expect(priced.original(b)).toBe(perToken);
    expect(priced.original(perToken)).toBe(perToken);
    expect(priced.route.models).toBe(src.models);
  });
});
