/**
 * Broadcast (docs/observability.md): every generation written (the recorder's `written` hook, after its batch is in
 * the database — never on the request path) goes to its workspace's enabled destinations when the workspace has
 * `is_observability_broadcast_enabled`, filtered by each destination's key list and sampling rate. Each destination
 * has its own bounded queue and one sender: OTLP variants post batches of spans, webhooks one signed JSON POST per
 * generation; failures are retried with exponential backoff, then counted (failed, last error); a full queue drops
 * and counts. A slow or failing destination never holds a request, a flush or another destination.
 */
import type { Logger } from 'pino';
import type { GenerationContent } from '../../core/io-log.js';
import { checkOutboundUrl } from '../../core/addresses.js';
import { otlpTraces } from '../../core/otlp-json.js';
import type { DestinationRow, DestinationStats } from '../../store/destinations.js';
import type { GenerationContentRow } from '../../store/generation-content.js';
import type { GenerationRow, Store } from '../../store/types.js';
import type { WorkspaceService } from '../workspaces.js';
import { signWebhook } from '../videos.js';
import { fullConfig } from './destinations.js';

export interface BroadcastOptions {
  allowLoopback: boolean;
  webhookSecret: string | null;
  /** Delivery attempts of one batch (or one webhook) before it is given up. */
  maxAttempts: number;
  /** Delay before the first retry (ms); doubles each time, at most 60 s. */
  retryMs: number;
  /** Timeout of one delivery (ms). */
  timeoutMs: number;
  /** Events kept per destination while its sender is behind; more are dropped (and counted). */
  queueLimit: number;
}

interface Item {
  row: GenerationRow;
  content: GenerationContent | null;
}

/** One destination's queue, sender and counters not yet written. */
class Outbox {
  queue: Item[] = [];
  running = false;
  pending: DestinationStats = { sent: 0, failed: 0, dropped: 0, last_error: null, last_error_at: null, last_success_at: null };
  constructor(public dest: DestinationRow) {}
}

export class Broadcast {
  private outboxes = new Map<string, Outbox>();
  private loadedAt = -Infinity;
  private loading: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  /** Generations handed to destinations' queues so far (tests and metrics). */
  accepted = 0;

  constructor(
    private readonly deps: { store: Store; workspaces: WorkspaceService; log: Logger; now: () => number; options: BroadcastOptions; rng?: () => number },
  ) {}

  /** The destinations changed (this instance): reload them before the next batch. */
  invalidate(): void {
    this.loadedAt = -Infinity;
  }

  /** The recorder's `written` hook: queues what each destination gets. Synchronous and cheap; never throws. */
  written = (rows: Array<{ row: GenerationRow; content: GenerationContentRow | null }>): void => {
    if (this.closed || rows.length === 0) return;
    const p = this.accept(rows)
      .catch((err: unknown) => this.deps.log.warn({ err }, 'broadcast: queuing generations failed'))
      .finally(() => this.accepting.delete(p));
    this.accepting.add(p);
  };

  /** Batches being sorted into queues. */
  private readonly accepting = new Set<Promise<void>>();

  private async accept(rows: Array<{ row: GenerationRow; content: GenerationContentRow | null }>): Promise<void> {
    await this.refresh();
    if (this.outboxes.size === 0) return;
    const rng = this.deps.rng ?? Math.random;
    const enabled = new Map<string, boolean>();
    for (const { row, content } of rows) {
      let on = enabled.get(row.workspace_id);
      if (on === undefined) enabled.set(row.workspace_id, (on = (await this.deps.workspaces.cached(row.workspace_id))?.is_observability_broadcast_enabled === true));
      if (!on) continue;
      let parsed: GenerationContent | null | undefined;
      for (const box of this.outboxes.values()) {
        const d = box.dest;
        if (d.workspace_id !== row.workspace_id || !d.enabled) continue;
        if (d.api_key_hashes && !d.api_key_hashes.includes(row.key_hash)) continue;
        if (d.sampling_rate < 1 && rng() >= d.sampling_rate) continue;
        if (box.queue.length >= this.deps.options.queueLimit) {
          box.pending.dropped++;
          continue;
        }
        if (parsed === undefined) parsed = content ? (JSON.parse(content.content) as GenerationContent) : null;
        box.queue.push({ row, content: d.privacy_mode ? null : parsed });
        this.accepted++;
        if (!box.running) void this.drain(box);
      }
    }
  }

  /** Loads the destinations (every 30 s, or after a change here). */
  private async refresh(): Promise<void> {
    if (this.deps.now() - this.loadedAt < 30_000) return;
    this.loading ??= (async () => {
      try {
        const rows = await this.deps.store.listDestinations(null);
        const seen = new Set<string>();
        for (const d of rows) {
          seen.add(d.id);
          const box = this.outboxes.get(d.id);
          if (box) box.dest = d;
          else this.outboxes.set(d.id, new Outbox(d));
        }
        for (const id of [...this.outboxes.keys()]) if (!seen.has(id) && !this.outboxes.get(id)!.running) this.outboxes.delete(id);
        this.loadedAt = this.deps.now();
      } finally {
        this.loading = null;
      }
    })();
    await this.loading;
    this.startStatsTimer();
  }

  /** Sends a destination's queue, batch after batch, until it is empty. */
  private async drain(box: Outbox): Promise<void> {
    box.running = true;
    try {
      while (box.queue.length > 0 && !this.closed) {
        const batch = box.dest.type === 'webhook' ? box.queue.splice(0, 1) : box.queue.splice(0, 100);
        const error = await this.deliverWithRetries(box.dest, batch);
        const at = new Date(this.deps.now()).toISOString();
        if (error === null) (box.pending.sent += batch.length), (box.pending.last_success_at = at);
        else (box.pending.failed += batch.length), (box.pending.last_error = error.slice(0, 500)), (box.pending.last_error_at = at);
      }
    } finally {
      box.running = false;
    }
  }

  private async deliverWithRetries(dest: DestinationRow, batch: Item[]): Promise<string | null> {
    const o = this.deps.options;
    let error: string | null = null;
    for (let attempt = 1; attempt <= o.maxAttempts; attempt++) {
      error = await this.deliver(dest, batch).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
      if (error === null) return null;
      if (attempt < o.maxAttempts && !this.closed) await new Promise((r) => setTimeout(r, Math.min(o.retryMs * 2 ** (attempt - 1), 60_000)).unref());
    }
    this.deps.log.warn({ destination: dest.id, type: dest.type, events: batch.length, error }, 'broadcast: delivery given up');
    return error;
  }

  /** One delivery; null when the destination took it, else why not. */
  private async deliver(dest: DestinationRow, batch: Item[]): Promise<string | null> {
    const req = this.request(dest, batch);
    // The guard again at send time (the URL was checked when saved; the loopback allowance may have changed).
    checkOutboundUrl(req.url, this.deps.options.allowLoopback, 'url');
    const res = await fetch(req.url, { method: req.method, headers: req.headers, body: req.body, redirect: 'manual', signal: AbortSignal.timeout(this.deps.options.timeoutMs) });
    await res.arrayBuffer().catch(() => undefined);
    return res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`;
  }

  private request(dest: DestinationRow, batch: Item[]): { url: string; method: string; headers: Record<string, string>; body: string } {
    const c = fullConfig(dest);
    const extra = (c.headers ?? {}) as Record<string, string>;
    if (dest.type === 'webhook') {
      const { row, content } = batch[0]!;
      const body = JSON.stringify(webhookPayload(row, content));
      const secret = (c.secret as string | undefined) ?? this.deps.options.webhookSecret!;
      const t = Math.floor(this.deps.now() / 1000);
      const headers = { ...extra, 'content-type': 'application/json', 'user-agent': 'model-gateway-broadcast/0.1', 'x-gateway-idempotency-key': row.id, 'x-gateway-signature': signWebhook(secret, t, body) };
      return { url: c.url as string, method: (c.method as string) ?? 'POST', headers, body };
    }
    const resource: Record<string, string> = { 'service.name': 'model-gateway' };
    const headers: Record<string, string> = { ...extra, 'content-type': 'application/json' };
    let url: string;
    if (dest.type === 'langfuse') {
      url = `${c.baseUrl as string}/api/public/otel/v1/traces`;
      headers.authorization = `Basic ${Buffer.from(`${c.publicKey as string}:${c.secretKey as string}`).toString('base64')}`;
    } else if (dest.type === 'datadog') {
      // Datadog's OTLP traces intake: https://otlp.<site>/v1/traces with the API key in dd-api-key.
      const u = new URL(c.url as string);
      u.hostname = u.hostname.replace(/^api\./, 'otlp.');
      url = `${u.origin}/v1/traces`;
      headers['dd-api-key'] = c.apiKey as string;
      resource['service.name'] = c.mlApp as string;
      resource['ml_app'] = c.mlApp as string;
    } else {
      const e = c.endpoint as string;
      url = /\/v1\/traces$/.test(e) ? e : `${e}/v1/traces`;
    }
    return { url, method: 'POST', headers, body: JSON.stringify(otlpTraces(batch, resource)) };
  }

  private startStatsTimer(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.writeStats(), 2000);
    this.timer.unref();
  }

  /** Writes the counters gathered since the last write (GET /observability/destinations shows them). */
  async writeStats(): Promise<void> {
    for (const box of this.outboxes.values()) {
      const p = box.pending;
      if (p.sent === 0 && p.failed === 0 && p.dropped === 0) continue;
      box.pending = { sent: 0, failed: 0, dropped: 0, last_error: null, last_error_at: null, last_success_at: null };
      await this.deps.store.addDestinationStats(box.dest.id, p).catch((err: unknown) => this.deps.log.warn({ err }, 'broadcast: writing delivery counters failed'));
    }
  }

  /** Waits until every queue is empty (tests), at most `ms`. */
  async idle(ms = 10_000): Promise<void> {
    const until = Date.now() + ms;
    await Promise.all([...this.accepting]);
    while ([...this.outboxes.values()].some((b) => b.running || b.queue.length > 0) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await this.writeStats();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.idle(2000);
    this.closed = true;
    await this.writeStats();
  }
}

/** The webhook body of one generation: its record (and content when logged and allowed). */
function webhookPayload(row: GenerationRow, content: GenerationContent | null) {
  return {
    type: 'generation.completed',
    created_at: row.created_at,
    data: {
      id: row.id,
      workspace_id: row.workspace_id,
      api_key_hash: row.key_hash,
      api_type: row.api_type,
      requested_model: row.requested_model,
      model: row.model,
      provider_name: row.provider_name,
      status: row.status,
      finish_reason: row.finish_reason,
      streamed: row.streamed,
      tokens_prompt: row.tokens_prompt,
      tokens_completion: row.tokens_completion,
      total_cost: row.total_cost,
      latency: row.latency_ms,
      time_to_first_token: row.ttft_ms,
      session_id: row.session_id,
      error: row.error,
      ...(content ? { content } : {}),
    },
  };
}
