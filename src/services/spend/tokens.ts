/**
 * What token rate limits counted, kept in the store (docs/spend.md, "Token rate limits"): every attempt's settled
 * tokens are recorded per key and clock minute — the minute it reserved in — with the generation records, so that a
 * minute's counter seeded later (a restart, Redis lost mid-minute) starts from what the minute already used.
 */
import type { RateScope } from '../../core/rate-limits.js';
import type { KeyRow, Store } from '../../store/types.js';
import { tokensId, type GenerationRecorder } from '../generations.js';

export class TokenUsage {
  constructor(private readonly deps: { store: Pick<Store, 'keyTokensInMinute' | 'listKeyHashes'>; recorder: Pick<GenerationRecorder, 'unflushedTokens' | 'tokensUsed'> }) {}

  /** An attempt of `hash` settled `tokens` reserved in `minute` (queued with the records, before the counters settle). */
  used(hash: string, minute: number, tokens: number): void {
    this.deps.recorder.tokensUsed(hash, minute, tokens);
  }

  /**
   * The tokens a token limit counting `scope` (the key's own: `key`; a guardrail's: per key, per member or for the
   * workspace) used in `minute`: this instance's not yet written tokens of every key the scope counts — taken after
   * the keys are listed and before the store's tokens are read, so that a batch written during the read is counted (at
   * worst twice: a refusal a little early, never an overshoot) — plus the store's. Read once per scope and minute (a
   * seed), never per request.
   *
   * When the store cannot be read, the seed throws, whatever the scope: no count this instance holds alone is exact
   * (other instances' tokens, and this one's written before the outage, are only in the store), so the scope's seed
   * backs off and its requests get 503 like every other seed's (docs/spend.md, "When the store cannot be read").
   */
  async seed(key: KeyRow, scope: RateScope, minute: number): Promise<number> {
    const hashes = await this.hashes(key, scope);
    const unflushed = this.deps.recorder.unflushedTokens;
    let unwritten = 0;
    if (unflushed.size > 0) for (const h of hashes) unwritten += unflushed.get(tokensId(h, minute)) ?? 0;
    return unwritten + (await this.deps.store.keyTokensInMinute(hashes, minute));
  }

  /** The keys whose tokens a limit of `scope` counts, as guardrail token limits count them (core/rate-limits.ts). */
  private async hashes(key: KeyRow, scope: RateScope): Promise<string[]> {
    const hashes =
      scope === 'workspace'
        ? await this.deps.store.listKeyHashes({ workspace_id: key.workspace_id })
        : scope === 'member' && key.creator_user_id
          ? await this.deps.store.listKeyHashes({ creator_user_id: key.creator_user_id })
          : [key.hash];
    if (!hashes.includes(key.hash)) hashes.push(key.hash);
    return hashes;
  }
}
