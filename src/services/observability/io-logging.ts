/**
 * I/O logging (docs/observability.md): which requests keep their content (the workspace's settings, read from the
 * workspace cache — no database read per request), the content endpoint's lookup, and the retention job that deletes
 * content older than GATEWAY_IO_LOG_RETENTION_DAYS.
 */
import type { Logger } from 'pino';
import { notFound } from '../../core/errors.js';
import { IoCapture, ioLogged, type GenerationContent, type IoApi } from '../../core/io-log.js';
import type { UpstreamError } from '../../core/provider-errors.js';
import type { KeyKind, Store, WorkspaceRow } from '../../store/types.js';
import type { AttemptObserver, AttemptTarget } from '../attempts/runner.js';

export interface IoLoggingOptions {
  /** Content older than this many days is deleted by the retention job. */
  retentionDays: number;
  /** How often the retention job runs (ms). */
  sweepMs?: number;
}

export class IoLogging {
  private timer: NodeJS.Timeout | null = null;
  /** Rows the retention job deleted so far. */
  expired = 0;

  constructor(
    private readonly deps: { store: Store; log: Logger; now: () => number; options: IoLoggingOptions; rng?: () => number },
  ) {}

  /** A capture for this request when its workspace logs it (switch, key list, sample); null otherwise (nothing kept). */
  capture(ws: WorkspaceRow | null | undefined, keyHash: string, api: IoApi, body: Record<string, unknown>): IoCapture | null {
    return ioLogged(ws, keyHash, this.deps.rng ?? Math.random) ? new IoCapture(api, body) : null;
  }

  /** The logged content of a generation; 404 when none was logged (or it is another key's, for an inference key). */
  async content(id: string, viewer: { kind: KeyKind; hash: string }): Promise<GenerationContent> {
    const row = await this.deps.store.getGenerationContent(id);
    if (!row || (viewer.kind === 'inference' && row.key_hash !== viewer.hash)) throw notFound(`No logged content for generation ${id}`);
    return JSON.parse(row.content) as GenerationContent;
  }

  /** Deletes expired content, in bounded batches; returns how many rows. */
  async sweep(): Promise<number> {
    const before = new Date(this.deps.now() - this.deps.options.retentionDays * 86_400_000).toISOString();
    let total = 0;
    for (let n = -1; n !== 0 && total < 1_000_000; total += n) n = await this.deps.store.deleteGenerationContentBefore(before, 1000);
    this.expired += total;
    if (total > 0) this.deps.log.info({ deleted: total, before }, 'expired logged content deleted');
    return total;
  }

  /** Starts the retention job (first run at once). */
  start(): void {
    if (this.timer) return;
    const run = () => void this.sweep().catch((err: unknown) => this.deps.log.warn({ err }, 'the I/O log retention job failed'));
    run();
    this.timer = setInterval(run, this.deps.options.sweepMs ?? 3_600_000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The attempt observer of a logged request: every failed attempt's provider error goes into its capture. */
export function ioObserver<A extends AttemptTarget>(cap: IoCapture): AttemptObserver<A> {
  return {
    started() {},
    succeeded() {},
    failed(a, e) {
      const up = e as Partial<UpstreamError>;
      cap.failed(e.status, e.message, a.provider.slug, up.raw ?? null);
    },
  };
}
