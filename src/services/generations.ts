/**
 * Generation records and key usage, written off the request path: records queue in memory and are flushed in
 * batches (every `intervalMs`, or sooner when `batchSize` accumulate), in one transaction with the key usage they
 * add. A failed flush keeps the batch for the next one while the database is unreachable; a batch the database
 * refuses while it answers is written row by row, and rows it still refuses go to a dead-letter table. `close()`
 * flushes everything: nothing is lost on a clean stop.
 */
import type { Logger } from 'pino';
import { utcDay } from '../core/limits.js';
import { nanoToUsd, usdToNano } from '../core/money.js';
import type { DeadLetter, GenerationRow, KeyTokensDelta, KeyUsageDelta, Store } from '../store/types.js';
import { buildContent, type IoCapture } from '../core/io-log.js';
import type { GenerationContentRow } from '../store/generation-content.js';

/**
 * The key usage a batch adds, one delta per key and UTC day (a batch is mostly one key's requests: one upsert instead
 * of one per row). Only costed generations count, as requests too.
 */
export function keyUsage(batch: readonly GenerationRow[]): KeyUsageDelta[] {
  const byKeyDay = new Map<string, KeyUsageDelta>();
  // The delta of the row before: a batch is mostly one key's requests of one day, whose rows reuse it without
  // slicing the day nor building and hashing the key.
  let d: KeyUsageDelta | undefined;
  for (const r of batch) {
    if (r.total_cost === null || !(r.total_cost > 0)) continue;
    if (!(d && d.key_hash === r.key_hash && r.created_at.endsWith('Z') && r.created_at.startsWith(d.day))) {
      // Records are stamped with UTC ISO strings (`…Z`): their first ten characters are the UTC day.
      const day = r.created_at.endsWith('Z') ? r.created_at.slice(0, 10) : utcDay(Date.parse(r.created_at));
      const k = `${r.key_hash}|${day}`;
      d = byKeyDay.get(k);
      if (!d) byKeyDay.set(k, (d = { key_hash: r.key_hash, day, usage: 0, byok_usage: 0, requests: 0 }));
    }
    // Summed in nano-dollars (exact), then turned back into USD.
    if (r.is_byok) d.byok_usage += usdToNano(r.total_cost);
    else d.usage += usdToNano(r.total_cost);
    d.requests++;
  }
  for (const d of byKeyDay.values()) (d.usage = nanoToUsd(d.usage)), (d.byok_usage = nanoToUsd(d.byok_usage));
  return [...byKeyDay.values()];
}

/**
 * The id under which a key's BYOK spend is counted while not yet written (`unflushedSpend`):
 * apart from its other spend, which is all that a limit without `include_byok_*` counts (docs/byok.md).
 */
export function byokSpendId(hash: string): string {
  return `${hash}+byok`;
}

/**
 * How many clock minutes before the current one key_tokens_minute keeps (a seed reads only the minute its counter
 * counts, the current one: the margin is for clocks that differ between instances).
 */
export const TOKEN_KEEP_MINUTES = 10;

/** The id under which a key's tokens of one clock minute are counted while not yet written (`unflushedTokens`). */
export function tokensId(hash: string, minute: number): string {
  return `${hash}|${minute}`;
}

/** What a non-streamed, single-answer request (embeddings, transcriptions) records; the other fields take their defaults. */
export interface AnswerOutcome {
  id: string;
  requestId: string;
  key: { hash: string; workspace_id: string };
  apiType: string;
  requestedModel: string;
  /** The endpoint that served (or failed last, for an error after it), or null. */
  attempt: { model: string; provider: { slug: string }; endpoint: { tag: string }; byok?: unknown } | null;
  status: number;
  error: { status: number; message: string } | null;
  promptTokens: number;
  completionTokens: number;
  cost: number | null;
  upstreamId: string | null;
  cancelled: boolean;
  started: number;
  end: number;
  attempts: GenerationRow['attempts'];
}

/** The generation record of a single-answer request. */
export function answerRecord(o: AnswerOutcome): GenerationRow {
  return {
    id: o.id,
    request_id: o.requestId,
    key_hash: o.key.hash,
    workspace_id: o.key.workspace_id,
    api_type: o.apiType,
    requested_model: o.requestedModel,
    model: o.attempt?.model ?? null,
    provider_name: o.attempt?.provider.slug ?? null,
    endpoint_tag: o.attempt?.endpoint.tag ?? null,
    upstream_id: o.upstreamId,
    streamed: false,
    cancelled: o.cancelled,
    status: o.status,
    finish_reason: o.status === 200 ? 'stop' : o.error ? 'error' : null,
    native_finish_reason: null,
    tokens_prompt: o.promptTokens,
    tokens_completion: o.completionTokens,
    native_tokens_reasoning: 0,
    native_tokens_cached: 0,
    native_tokens_cache_write: 0,
    total_cost: o.cost,
    upstream_inference_cost: o.cost,
    is_byok: o.attempt?.byok !== undefined,
    latency_ms: Math.round(o.end - o.started),
    ttft_ms: null,
    generation_time_ms: o.status === 200 ? Math.round(o.end - o.started) : null,
    attempts: o.attempts,
    error: o.error,
    preset_id: null,
    session_id: null,
    created_at: new Date(o.end).toISOString(),
  };
}

/** How the recorder batches its writes, and what it is given rather than reads (the gateway's clock, settings). */
export interface RecorderOptions {
  /** The longest a record waits before its flush starts (ms). */
  intervalMs: number;
  /** Records that start a flush at once. */
  batchSize: number;
  /** The clock token minutes are told by (default Date.now). */
  now?: () => number;
  /** The most bytes one logged request's content is stored with (GATEWAY_IO_LOG_MAX_BYTES; default 256 KiB). */
  ioMaxBytes?: number;
}

export class GenerationRecorder {
  private queue: GenerationRow[] = [];
  /** Logged requests' captures, written after their records (I/O logging). */
  private contents: Array<{ row: GenerationRow; cap: IoCapture }> = [];
  /** Called with every written record and its content (null: not logged), off the request path (broadcast). */
  written: ((rows: Array<{ row: GenerationRow; content: GenerationContentRow | null }>) => void) | null = null;
  private readonly pending = new Map<string, GenerationRow>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** Spend recorded by this instance but not yet flushed, per key (read by limit checks); BYOK spend under `byokSpendId`. */
  readonly unflushedSpend = new Map<string, number>();
  /**
   * Tokens settled against token rate limits and not yet written, per `tokensId(hash, minute)` (read by their seeds);
   * `tokenQueue`: what the next flush writes (a failed write goes back in it).
   */
  readonly unflushedTokens = new Map<string, number>();
  private tokenQueue = new Map<string, KeyTokensDelta>();
  /** Successful flushes so far: a cached database total plus `unflushedSpend` is exact while this is unchanged. */
  flushes = 0;
  /** Flushes started so far: a record queued before flush number n started is in the store once one from n on succeeded. */
  flushStarts = 0;
  /** Called when every record queued before flush number `through` started is in the store (spend control's seeds). */
  onStored: ((through: number) => void) | null = null;
  /** Failed flushes so far (each batch is kept and retried). */
  flushFailures = 0;
  /** Records the database refused, moved to the dead-letter table. */
  deadLettered = 0;
  /** Called with every record as it is accepted (the metrics); must be cheap and must not throw. */
  observer: ((row: GenerationRow) => void) | null = null;

  /** The clock token minutes are told by (the gateway's): which minutes are old enough to drop. */
  private readonly now: () => number;
  /** The most bytes one logged request's content is stored with (GATEWAY_IO_LOG_MAX_BYTES). */
  private readonly ioMaxBytes: number;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: RecorderOptions = { intervalMs: 500, batchSize: 500 },
  ) {
    this.now = opts.now ?? Date.now;
    this.ioMaxBytes = opts.ioMaxBytes ?? 256 * 1024;
  }

  /** Queues a record, and (I/O logging on for this request) what it captured, assembled and stored at flush time. */
  record(row: GenerationRow, io?: IoCapture | null): void {
    this.observer?.(row);
    this.queue.push(row);
    if (io) this.contents.push({ row, cap: io });
    this.pending.set(row.id, row);
    if (row.total_cost) {
      const id = row.is_byok ? byokSpendId(row.key_hash) : row.key_hash;
      this.unflushedSpend.set(id, nanoToUsd(usdToNano(this.unflushedSpend.get(id) ?? 0) + usdToNano(row.total_cost)));
    }
    if (this.queue.length >= this.opts.batchSize) this.flush().catch(() => undefined);
    else this.flushSoon();
  }

  private flushSoon(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch(() => undefined);
    }, this.opts.intervalMs);
    this.timer.unref();
  }

  /**
   * An attempt of key `hash` settled `tokens` against its token rate limits, reserved in clock `minute` (docs/spend.md,
   * "Token rate limits"): written with the next flush (table key_tokens_minute), counted by `unflushedTokens` until
   * then. Called before the tokens are settled in the counters, like a record before its spend.
   */
  tokensUsed(hash: string, minute: number, tokens: number): void {
    if (!(tokens > 0)) return;
    const id = tokensId(hash, minute);
    this.unflushedTokens.set(id, (this.unflushedTokens.get(id) ?? 0) + tokens);
    const q = this.tokenQueue.get(id);
    if (q) q.tokens += tokens;
    else this.tokenQueue.set(id, { key_hash: hash, minute, tokens });
    this.flushSoon();
  }

  /**
   * Writes the queued tokens (before the records: a flush that fails after them does not write them twice), and has
   * the store drop minutes older than TOKEN_KEEP_MINUTES before this instance's clock minute. Queued tokens of such a
   * minute are dropped unwritten (no seed reads them, the store would drop them): an outage keeps at most that many
   * minutes of them.
   */
  private async writeTokens(tokens: Map<string, KeyTokensDelta>): Promise<void> {
    if (tokens.size === 0) return;
    const keepFrom = Math.floor(this.now() / 60_000) - TOKEN_KEEP_MINUTES;
    const deltas: KeyTokensDelta[] = [];
    for (const [id, d] of tokens) {
      if (d.minute >= keepFrom) deltas.push(d);
      else tokens.delete(id), this.unflushedTokens.delete(id);
    }
    if (deltas.length === 0) return;
    await this.store.addKeyTokens(deltas, keepFrom);
    for (const [id, d] of tokens) {
      const left = (this.unflushedTokens.get(id) ?? 0) - d.tokens;
      if (left <= 0) this.unflushedTokens.delete(id);
      else this.unflushedTokens.set(id, left);
    }
  }

  /** Tokens whose write failed: back in front of the queue. */
  private requeueTokens(tokens: Map<string, KeyTokensDelta>): void {
    for (const [id, d] of this.tokenQueue) {
      const q = tokens.get(id);
      if (q) q.tokens += d.tokens;
      else tokens.set(id, d);
    }
    this.tokenQueue = tokens;
  }

  /** A record still waiting to be written (so that GET /generation finds it at once). */
  peek(id: string): GenerationRow | undefined {
    return this.pending.get(id);
  }

  get queued(): number {
    return this.queue.length;
  }

  /** Writes everything queued so far. Concurrent calls share one flush at a time. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0 && this.tokenQueue.size === 0) return;
    const batch = this.queue;
    this.queue = [];
    const contents = this.contents;
    this.contents = [];
    const tokens = this.tokenQueue;
    this.tokenQueue = new Map();
    let tokensWritten = false;
    // Every flush takes the whole queue (a failed batch's rows go back in front): when it succeeds, every record (and
    // token count) queued before it started is in the store.
    const through = ++this.flushStarts;
    this.flushing = (async () => {
      try {
        await this.writeTokens(tokens);
        tokensWritten = true;
        await this.store.recordGenerations(batch, keyUsage(batch));
        await this.settled(batch);
        this.flushes++;
        this.onStored?.(through);
        await this.writeContents(batch, contents);
      } catch (err) {
        this.contents = contents.concat(this.contents);
        this.flushFailures++;
        if (!tokensWritten) this.requeueTokens(tokens);
        // A batch the database refuses while it answers holds a row it cannot store: write the rows one by one, so
        // that one refused row never blocks the others; the refused ones go to the dead-letter table.
        const left = batch.length === 0 ? [] : await this.salvage(batch).catch(() => batch);
        if (left.length === 0 && !tokensWritten) {
          // The records are in the store (or there were none), the token counts not: they go with a later flush.
          this.retryLater();
          if (batch.length === 0) throw err;
          await this.writeContents(batch, this.takeContents());
          return;
        }
        if (left.length === 0) {
          this.onStored?.(through);
          this.log.warn({ err, records: batch.length }, 'a generation batch was refused; written row by row');
          await this.writeContents(batch, this.takeContents());
          return;
        }
        this.log.error({ err, records: left.length }, 'writing generation records failed; will retry');
        this.queue = left.concat(this.queue);
        this.retryLater();
        throw err;
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  private takeContents(): Array<{ row: GenerationRow; cap: IoCapture }> {
    const held = this.contents;
    this.contents = [];
    return held;
  }

  /** After a failed flush: the next one a little later. */
  private retryLater(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush().catch(() => undefined);
    }, this.opts.intervalMs * 4);
    this.timer.unref();
  }

  /**
   * The logged content of a written batch (assembled here, off the request path), then the broadcast hand-off. A
   * content write that fails is logged and dropped: it never holds the records back.
   */
  private async writeContents(batch: GenerationRow[], contents: Array<{ row: GenerationRow; cap: IoCapture }>): Promise<void> {
    const byId = new Map<string, GenerationContentRow>();
    if (contents.length > 0) {
      const rows: GenerationContentRow[] = [];
      for (const { row, cap } of contents) {
        try {
          const content = JSON.stringify(buildContent(cap, row.error, row.provider_name, this.ioMaxBytes));
          rows.push({ generation_id: row.id, workspace_id: row.workspace_id, key_hash: row.key_hash, created_at: row.created_at, content });
        } catch (err) {
          this.log.warn({ err, id: row.id }, 'assembling logged content failed');
        }
      }
      try {
        await this.store.recordGenerationContent(rows);
        for (const r of rows) byId.set(r.generation_id, r);
      } catch (err) {
        this.log.error({ err, records: rows.length }, 'writing logged content failed; dropped');
      }
    }
    if (this.written) {
      try {
        this.written(batch.map((row) => ({ row, content: byId.get(row.id) ?? null })));
      } catch (err) {
        this.log.warn({ err }, 'the written-records hook failed');
      }
    }
  }

  /** Bookkeeping once rows are in the store (written or dead-lettered): no longer pending nor unflushed spend. */
  private async settled(rows: GenerationRow[]): Promise<void> {
    if (rows.length === 0) return;
    for (const r of rows) {
      this.pending.delete(r.id);
      if (r.total_cost) {
        const id = r.is_byok ? byokSpendId(r.key_hash) : r.key_hash;
        const left = usdToNano(this.unflushedSpend.get(id) ?? 0) - usdToNano(r.total_cost);
        if (left <= 0) this.unflushedSpend.delete(id);
        else this.unflushedSpend.set(id, nanoToUsd(left));
      }
    }
  }

  /**
   * After a failed batch: when the database answers, each row is written alone; a row it still refuses is kept in the
   * dead-letter table with the reason (its usage still counts). Returns the rows not written anywhere (the database
   * is unreachable): they stay queued.
   */
  private async salvage(batch: GenerationRow[]): Promise<GenerationRow[]> {
    if (!(await this.store.ping())) return batch;
    const written: GenerationRow[] = [];
    const refused: DeadLetter[] = [];
    for (const row of batch) {
      try {
        await this.store.recordGenerations([row], keyUsage([row]));
        written.push(row);
      } catch (err) {
        refused.push({ row, reason: err instanceof Error ? err.message : String(err) });
      }
    }
    await this.settled(written).catch(() => undefined);
    if (refused.length === 0) return [];
    const rows = refused.map((d) => d.row);
    try {
      await this.store.deadLetterGenerations(refused, keyUsage(rows));
    } catch {
      return rows;
    }
    this.deadLettered += refused.length;
    this.log.error({ records: refused.length, ids: rows.slice(0, 10).map((r) => r.id), reason: refused[0].reason }, 'generation records refused by the database were moved to generation_dead_letters');
    await this.settled(rows).catch(() => undefined);
    return [];
  }

  /** Final flush at shutdown, retried a few times before giving up. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    for (let i = 0; i < 5 && (this.queue.length > 0 || this.tokenQueue.size > 0); i++) {
      try {
        await this.flush();
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    if (this.queue.length > 0) this.log.error({ lost: this.queue.length }, 'generation records could not be written at shutdown');
  }
}
