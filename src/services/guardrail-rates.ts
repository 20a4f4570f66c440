/**
 * Whether any guardrail of the organization has a rate limit (docs/guardrails.md, "Rate limits"): read from the store
 * once per guardrail change (and at least every cache TTL), so that while none has one a request skips the guardrail
 * rate check without looking at its policy.
 */
import type { Logger } from 'pino';

export class GuardrailRatePresence {
  private known: { any: boolean; at: number } | null = null;
  private probe: Promise<void> | null = null;
  /** Bumped by `forget`: a read that started before a change is not kept. */
  private generation = 0;

  constructor(
    private readonly read: () => Promise<boolean>,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly log?: Logger,
  ) {}

  /** A guardrail changed (on any instance): not known any more. */
  forget(): void {
    this.generation++;
    this.known = null;
  }

  /** False only when no guardrail has a rate limit, as last read; true when unsure (a read is started then). */
  maybe(): boolean {
    const k = this.known;
    if (k !== null && this.now() - k.at < this.ttlMs) return k.any;
    if (!this.probe) {
      const gen = this.generation;
      this.probe = this.read()
        .then(
          (any) => {
            if (gen === this.generation) this.known = { any, at: this.now() };
          },
          (err: Error) => this.log?.warn({ err: err.message }, 'guardrail rate limits: could not read whether any is set'),
        )
        .finally(() => (this.probe = null));
    }
    return true;
  }
}
