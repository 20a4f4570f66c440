/**
 * Generation batches on SQLite, written by a worker thread with its own connection to the database file: the request
 * thread only posts the batch (a structured clone) and never runs the inserts, nor waits on the disk when SQLite
 * checkpoints its write-ahead log. Several connections to one file are what WAL mode is for; each batch is one
 * `BEGIN IMMEDIATE` transaction. An in-memory database cannot be shared, so it keeps the same writer in-thread.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { GenerationRow, KeyUsageDelta } from './types.js';
import { nanoToUsd, usdToNano } from '../core/money.js';

/** One generation row as the insert's positional values (booleans as 0/1, JSON columns as text, money as nano-dollars). */
export type RowValues = Array<string | number | null>;

/** A usage delta as `key_usage_daily` takes it: USD for the float columns, and exactly in nano-dollars (`*_nano`). */
export interface NanoUsageDelta extends KeyUsageDelta {
  usage_nano: number;
  byok_usage_nano: number;
}

/** `rollups`: the batch's analytics rollup deltas as the positional values of `rollupSql` (store/rollups.ts). */
export type BatchWrite = (rows: RowValues[], usage: NanoUsageDelta[], rollups: RowValues[]) => void;

/**
 * The encoder of generation rows into the insert's positional values, run on the request thread before a batch is
 * posted: an array of plain values costs about a third of a keyed object to clone and to rebuild on the other side,
 * and the writer thread binds it to the statement as it comes.
 */
export function rowEncoder(columns: readonly string[], jsonColumns: readonly string[], moneyColumns: readonly string[] = []): (row: GenerationRow) => RowValues {
  const json = columns.map((c) => jsonColumns.includes(c));
  // A USD amount goes to its float column (rounded to the nano-dollar) and, exactly, to its `<column>_nano` twin as
  // integer nano-dollars (src/core/money.ts; migration 0008, expand/contract).
  const money = columns.map((c) => moneyColumns.includes(c));
  const source = columns.map((c) => (c.endsWith('_nano') && moneyColumns.includes(c.slice(0, -5)) ? c.slice(0, -5) : c));
  const nano = columns.map((c, i) => source[i] !== c);
  return (row) => {
    const r = row as unknown as Record<string, unknown>;
    // Filled by push, not `new Array(n)`: a preallocated array is holey, and postMessage's structured clone writes a
    // holey array element by element as keyed properties (V8's slow path) — about twice the cost of a packed one.
    const out: RowValues = [];
    for (let i = 0; i < columns.length; i++) {
      const v = r[source[i]];
      if (v === undefined || v === null) out.push(null);
      else if (nano[i]) out.push(usdToNano(v as number));
      else if (money[i]) out.push(nanoToUsd(usdToNano(v as number)));
      else out.push(typeof v === 'boolean' ? (v ? 1 : 0) : json[i] ? JSON.stringify(v) : (v as string | number));
    }
    return out;
  };
}

/** Settings of every connection to a gateway SQLite file (the file itself is put in WAL mode once, by `openStore`). */
export const CONNECTION_PRAGMAS = ['busy_timeout = 5000', 'foreign_keys = ON', 'synchronous = NORMAL'] as const;

/**
 * The batch writer on one better-sqlite3 connection: a prepared positional insert of rows already encoded by
 * `rowEncoder`, the daily key-usage upsert and the analytics rollups' upsert (`rollupSql`, positional), in one
 * immediate transaction. Self-contained — it references nothing outside its body — because the writer thread runs it
 * from its source text.
 */
export function makeBatchWriter(sqlite: Database.Database, columns: readonly string[], rollupSql: string): BatchWrite {
  // `on conflict (id) do nothing`, not `insert or ignore`: the latter also skips a NOT NULL or CHECK violation without a
  // word, so a refused row would vanish instead of failing the batch and reaching the dead-letter table.
  const insert = sqlite.prepare(`insert into generations (${columns.join(', ')}) values (${columns.map(() => '?').join(', ')}) on conflict (id) do nothing`);
  const upsert = sqlite.prepare(
    'insert into key_usage_daily (key_hash, day, usage, usage_nano, byok_usage, byok_usage_nano, requests) ' +
      'values (@key_hash, @day, @usage, @usage_nano, @byok_usage, @byok_usage_nano, @requests) ' +
      'on conflict (key_hash, day) do update set usage = usage + excluded.usage, ' +
      'usage_nano = coalesce(usage_nano, cast(round(usage * 1000000000) as integer)) + excluded.usage_nano, ' +
      'byok_usage = byok_usage + excluded.byok_usage, ' +
      'byok_usage_nano = coalesce(byok_usage_nano, cast(round(byok_usage * 1000000000) as integer)) + excluded.byok_usage_nano, ' +
      'requests = requests + excluded.requests',
  );
  const rollup = sqlite.prepare(rollupSql);
  const tx = sqlite.transaction((rows: RowValues[], usage: NanoUsageDelta[], rollups: RowValues[]) => {
    for (const r of rows) insert.run(r);
    for (const u of usage) upsert.run(u);
    for (const d of rollups) rollup.run(d);
  });
  return (rows, usage, rollups) => tx.immediate(rows, usage, rollups);
}

interface ThreadData {
  driver: string;
  path: string;
  pragmas: readonly string[];
  columns: readonly string[];
  rollupSql: string;
}

/** The writer thread's body (run from source text, with `require` of an eval worker): one batch per message. */
function writerThread(make: typeof makeBatchWriter): void {
  const { parentPort, workerData } = require('node:worker_threads') as typeof import('node:worker_threads');
  const data = workerData as ThreadData;
  const Driver = require(data.driver) as typeof Database;
  const db = new Driver(data.path);
  for (const pragma of data.pragmas) db.pragma(pragma);
  const write = make(db, data.columns, data.rollupSql);
  parentPort!.on('message', (m: { id: number; rows: RowValues[]; usage: NanoUsageDelta[]; rollups: RowValues[] } | 'close') => {
    if (m === 'close') {
      db.close();
      parentPort!.close();
      return;
    }
    try {
      write(m.rows, m.usage, m.rollups);
      parentPort!.postMessage({ id: m.id, error: null });
    } catch (err) {
      parentPort!.postMessage({ id: m.id, error: String((err as Error).message ?? err) });
    }
  });
  parentPort!.postMessage({ id: 0, error: null });
}

/** Raised when the writer thread is gone: the caller writes in-thread instead. */
export class WriterGone extends Error {}

/** The writer thread, seen from the request thread: `write` resolves once the batch is committed. */
export class SqliteWriterThread {
  private readonly waiting = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private next = 1;
  private gone: Error | null = null;

  private constructor(private readonly worker: Worker) {
    worker.on('message', (m: { id: number; error: string | null }) => {
      const w = this.waiting.get(m.id);
      if (!w) return;
      this.waiting.delete(m.id);
      if (m.error === null) w.resolve();
      else w.reject(new Error(m.error));
    });
    const fail = (err: Error) => {
      this.gone ??= new WriterGone(`generation writer thread stopped: ${err.message}`);
      for (const w of this.waiting.values()) w.reject(this.gone);
      this.waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    worker.unref();
  }

  /** Starts the thread on a database file (already migrated); resolves once its statements are prepared. */
  static start(path: string, columns: readonly string[], rollupSql: string): Promise<SqliteWriterThread> {
    const data: ThreadData = { driver: createRequire(import.meta.url).resolve('better-sqlite3'), path, pragmas: CONNECTION_PRAGMAS, columns, rollupSql };
    const source = `(${writerThread.toString()})(${makeBatchWriter.toString()})`;
    const thread = new SqliteWriterThread(new Worker(source, { eval: true, workerData: data }));
    return new Promise((resolve, reject) => {
      thread.waiting.set(0, { resolve: () => resolve(thread), reject });
    });
  }

  write(rows: RowValues[], usage: NanoUsageDelta[], rollups: RowValues[]): Promise<void> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.next++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, rows, usage, rollups });
    });
  }

  /** Stops the thread after the batches already posted. */
  async close(): Promise<void> {
    if (this.gone) return;
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage('close');
    await exited;
  }
}
