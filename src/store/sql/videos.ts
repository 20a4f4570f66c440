/** Video generation jobs (docs/videos.md): conditional transitions and leases. */
import { sql, type Transaction } from 'kysely';
import { SqlBase, type Db, type Row } from './base.js';
import type { VideoJobPatch, VideoJobRow, VideoStore } from '../types.js';
import { ACTIVE_VIDEO_STATUSES, checkPath, type VideoStatus } from '../../core/video-states.js';
import { nanoToUsd } from '../../core/money.js';

export abstract class VideoSql extends SqlBase implements VideoStore {
  // ---- video generation jobs ------------------------------------------------------------------------------

  async insertVideoJob(row: VideoJobRow): Promise<void> {
    await this.guard(`video job ${row.id} already exists`, () => this.db.insertInto('video_jobs').values(this.enc({ ...row })).execute());
  }

  async getVideoJob(id: string): Promise<VideoJobRow | null> {
    return this.dec<VideoJobRow>(await this.db.selectFrom('video_jobs').selectAll().where('id', '=', id).executeTakeFirst());
  }

  /** The patch as column values: never `status` (only transitions change it), never the identity columns. */
  private videoValues(patch: VideoJobPatch, now: string): Row {
    const p = { ...(patch as Row) };
    for (const k of ['id', 'workspace_id', 'key_hash', 'model', 'status', 'created_at']) delete p[k];
    return this.enc({ ...p, updated_at: p.updated_at ?? now });
  }

  async transitionVideoJob(id: string, path: VideoStatus[], patch: VideoJobPatch, opts: { owner?: string; now?: string } = {}): Promise<boolean> {
    // The transition table guards before any SQL; the conditional UPDATEs make the database agree with it.
    checkPath(path);
    const now = opts.now ?? new Date().toISOString();
    const step = async (db: Db | Transaction<any>, from: VideoStatus, to: VideoStatus, values: Row): Promise<boolean> => {
      let q = db.updateTable('video_jobs').set({ ...values, status: to }).where('id', '=', id).where('status', '=', from);
      if (opts.owner !== undefined) q = q.where('lease_owner', '=', opts.owner);
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows) === 1;
    };
    const last = this.videoValues(patch, now);
    if (path.length === 2) return step(this.db, path[0], path[1], last);
    class Lost extends Error {}
    try {
      return await this.db.transaction().execute(async (trx) => {
        for (let i = 1; i < path.length; i++) {
          const ok = await step(trx, path[i - 1], path[i], i === path.length - 1 ? last : { updated_at: now });
          if (!ok) throw new Lost();
        }
        return true;
      });
    } catch (err) {
      if (err instanceof Lost) return false;
      throw err;
    }
  }

  async updateVideoJob(id: string, patch: VideoJobPatch, when: { status?: VideoStatus | VideoStatus[]; owner?: string }): Promise<boolean> {
    if ((patch as Row).status !== undefined) throw new Error('updateVideoJob cannot change status; use transitionVideoJob');
    let q = this.db.updateTable('video_jobs').set(this.videoValues(patch, new Date().toISOString())).where('id', '=', id);
    if (when.status !== undefined) q = Array.isArray(when.status) ? q.where('status', 'in', when.status) : q.where('status', '=', when.status);
    if (when.owner !== undefined) q = q.where('lease_owner', '=', when.owner);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async claimVideoJobs(q: { owner: string; now: string; leaseUntil: string; limit: number }): Promise<VideoJobRow[]> {
    const free = (eb: any) => eb.or([eb('lease_owner', 'is', null), eb('lease_owner', '=', q.owner), eb('lease_until', '<', q.now)]);
    const due = await this.db
      .selectFrom('video_jobs')
      .select('id')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', 'in', [...ACTIVE_VIDEO_STATUSES]), eb.or([eb('next_poll_at', 'is', null), eb('next_poll_at', '<=', q.now)])]),
          eb.and([eb('webhook_state', '=', 'pending'), eb('webhook_next_at', '<=', q.now)]),
        ]),
      )
      .where(free)
      .orderBy('created_at')
      .limit(q.limit)
      .execute();
    const claimed: string[] = [];
    for (const { id } of due) {
      // Atomic per row on both databases: of two instances racing for a job, exactly one sees its condition hold.
      const res = await this.db
        .updateTable('video_jobs')
        .set({ lease_owner: q.owner, lease_until: q.leaseUntil })
        .where('id', '=', id as string)
        .where(free)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 1) claimed.push(id as string);
    }
    if (claimed.length === 0) return [];
    const rows = await this.db.selectFrom('video_jobs').selectAll().where('id', 'in', claimed).where('lease_owner', '=', q.owner).orderBy('created_at').execute();
    return this.decAll<VideoJobRow>(rows);
  }

  async renewVideoLeases(owner: string, leaseUntil: string): Promise<number> {
    const res = await this.db
      .updateTable('video_jobs')
      .set({ lease_until: leaseUntil })
      .where('lease_owner', '=', owner)
      .where((eb) => eb.or([eb('status', 'in', [...ACTIVE_VIDEO_STATUSES]), eb('webhook_state', '=', 'pending')]))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async releaseVideoLeases(owner: string, ids?: string[], except?: string[]): Promise<number> {
    if (ids && ids.length === 0) return 0;
    let q = this.db.updateTable('video_jobs').set({ lease_owner: null, lease_until: null }).where('lease_owner', '=', owner);
    if (ids) q = q.where('id', 'in', ids);
    if (except && except.length > 0) q = q.where('id', 'not in', except);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async videoReservations(hashes: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (hashes.length === 0) return out;
    const rows = await this.db
      .selectFrom('video_jobs')
      .select(['key_hash', sql<number>`sum(${this.nanoOf('reserved_cost')})`.as('usd')])
      .where('key_hash', 'in', hashes)
      .where('status', 'in', [...ACTIVE_VIDEO_STATUSES])
      .groupBy('key_hash')
      .execute();
    for (const r of rows) if (r.usd !== null && Number(r.usd) > 0) out.set(r.key_hash as string, nanoToUsd(Number(r.usd)));
    return out;
  }
}
