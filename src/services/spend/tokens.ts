/**
 * What token rate limits counted, kept in the store (docs/spend.md, "Token rate limits"): every attempt's settled
 * tokens are recorded per key and clock minute — the minute it reserved in — with the generation records, so that a
 * minute's counter seeded later (a restart, Redis lost mid-minute) starts from what the minute already used.
 */
import type { Logger } from 'pino';
import type { RateScope } from '../../core/rate-limits.js';
import type { KeyRow, Store } from '../../store/types.js';
import { tokensId, type GenerationRecorder } from '../generations.js';

export class TokenUsage {
  private warned = 0;

  constructor(private readonly deps: { store: Pick<Store, 'keyTokensInMinute' | 'listKeyHashes'>; recorder: Pick<GenerationRecorder, 'unflushedTokens' | 'tokensUsed'>; log?: Logger }) {}

  /** An attempt of `hash` settled `tokens` reserved in `minute` (queued with the records, before the counters settle). */
  used(hash: string, minute: number, tokens: number): void {
    this.deps.recorder.tokensUsed(hash, minute, tokens);
  }

  /**
   * The tokens a token limit counting `scope` (the key's own: `key`; a guardrail's: per key, per member or for the
   * workspace) used in `minute`: this instance's not yet written — taken before the store is read, so that a batch
   * written during the read is counted (at worst twice: a refusal a little early, never an overshoot) — plus the
   * store's. Read once per scope and minute (a seed), never per request.
   *
   * When the store cannot be read (a database outage), the count is this instance's not yet written tokens of the key
   * alone: all that a minute first used here can hold (nothing settles in a scope before it is seeded, and during the
   * outage nothing is written), so token limits keep working; only a counter lost mid-minute (a restart, Redis lost)
   * during the outage starts below what the minute used.
   */
  async seed(key: KeyRow, scope: RateScope, minute: number): Promise<number> {
    const unwritten = new Map(this.deps.recorder.unflushedTokens);
    let hashes = [key.hash];
    let n = 0;
    try {
      hashes = await this.hashes(key, scope);
      n = await this.deps.store.keyTokensInMinute(hashes, minute);
    } catch (err) {
      hashes = [key.hash];
      n = 0;
      const now = Date.now();
      if (now - this.warned > 10_000) {
        this.warned = now;
        this.deps.log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'token rate limits: the store cannot be read; a minute starts from this instance\'s own count');
      }
    }
    for (const h of hashes) n += unwritten.get(tokensId(h, minute)) ?? 0;
    return n;
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
