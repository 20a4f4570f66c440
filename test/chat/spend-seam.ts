/**
 * Whether a burst against a spend limit was decided before any of its reservations gave room back. A request that
 * settles below its reservation (a cut stream) or is released frees room; a request decided after that may rightly
 * be admitted, so a test that counts exactly what a burst admits must know that every decision came first. On a
 * loaded machine a burst can take longer to decide than the simulator holds the answers; the tests then run again
 * with answers held longer instead of asserting on a run that proves nothing.
 */
import type { TestGateway } from '../helpers.js';

export interface SpendSeamWatch {
  /** Forgets what was seen (before a burst). */
  reset(): void;
  /** True when the last admission decided since `reset` came before the first settlement or release. */
  decidedFirst(): boolean;
}

const watches = new WeakMap<TestGateway, { lastDecision: number; firstFreed: number }>();

/**
 * Watches the spend seam of `instances` (the guardrail service's `spendHooks`, which every attempt's reservation goes
 * through): when each admission was decided (admitted or refused) and when each was settled or released.
 */
export function watchSpendSeam(instances: TestGateway[]): SpendSeamWatch {
  const seen = instances.map((t) => {
    let times = watches.get(t);
    if (!times) watches.set(t, (times = observe(t)));
    return times;
  });
  return {
    reset: () => seen.forEach((s) => Object.assign(s, { lastDecision: 0, firstFreed: Infinity })),
    decidedFirst: () => Math.max(...seen.map((s) => s.lastDecision)) < Math.min(...seen.map((s) => s.firstFreed)),
  };
}

function observe(t: TestGateway): { lastDecision: number; firstFreed: number } {
  const times = { lastDecision: 0, firstFreed: Infinity };
  const g = t.gw.svc.guardrails;
  const spendHooks = g.spendHooks.bind(g);
  g.spendHooks = ((key, askOf) => {
    const hooks = spendHooks(key, askOf);
    if (!hooks) return hooks;
    const decided = () => void (times.lastDecision = Math.max(times.lastDecision, Date.now()));
    const freed = () => void (times.firstFreed = Math.min(times.firstFreed, Date.now()));
    return {
      admit: async (a) => {
        let admission;
        try {
          admission = await hooks.admit(a);
        } finally {
          decided();
        }
        if (!admission) return admission;
        // Called on the admission itself: it may be a class instance (services/guardrail-spend.ts SpendAdmission).
        const held = admission;
        return { settle: (cost, used) => (freed(), held.settle(cost, used)), release: () => (freed(), held.release()) };
      },
    };
  }) as typeof g.spendHooks;
  return times;
}
