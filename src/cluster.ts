/**
 * Every core of one host (GATEWAY_WORKERS=N, docs/operations.md#workers): a primary process forks N gateway workers
 * that share the listening port (node:cluster hands connections out round-robin). Workers are ordinary instances on
 * the shared store — limits, rate counters, the response cache and key invalidations cross them through Redis, as
 * they cross hosts — so the primary only: applies migrations and the first-start bootstrap once before forking,
 * restarts a worker that dies, answers the workers' requests for the cluster's metrics (prom-client's
 * AggregatorRegistry sums every worker's series), and on SIGTERM/SIGINT stops every worker gracefully (each drains its
 * requests and writes its pending records) before exiting.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import type { GatewayConfig } from './config.js';
import { bootstrap } from './gateway.js';
import { openStore } from './store/sql-store.js';
import { METRICS_REQ, METRICS_RES, type MetricsRequest, type MetricsResponse } from './services/cluster-metrics.js';

/** Young generation (semi-space) size of the workers, MB: see docs/operations.md#sizing. */
const SEMI_SPACE_MB = 64;

/** A worker that dies while the cluster runs is replaced after this long (a crash loop stays slow). */
const RESTART_DELAY_MS = 1_000;
/** Beyond the shutdown grace period, how long the primary waits for a worker before killing it. */
const KILL_AFTER_MS = 10_000;

/**
 * Runs the primary: migrations and bootstrap once, then N workers. Resolves once the workers listen; `out` prints
 * the first management key (shown once). The process exits when every worker stopped after a signal.
 */
export async function runPrimary(config: GatewayConfig, log: Logger, out: (s: string) => void): Promise<void> {
  const store = openStore(config.databaseUrl);
  try {
    const applied = await store.migrate(config.migrate === 'off' ? 'check' : 'apply');
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    const secret = await bootstrap(store, config);
    if (secret && !config.adminKey) out(`\nFirst start: your management key (shown once, store it now):\n\n  ${secret}\n`);
  } finally {
    await store.close();
  }

  // The cluster's metrics: asked by the worker serving GET /metrics, gathered from every worker.
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker: Worker, msg: MetricsRequest) => {
    if (msg?.type !== METRICS_REQ) return;
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: METRICS_RES, id: msg.id, text } satisfies MetricsResponse),
      (err: Error) => worker.send({ type: METRICS_RES, id: msg.id, error: err.message } satisfies MetricsResponse),
    );
  });

  // Workers get the young generation `npm start` and the image give a single process (docs/operations.md#sizing),
  // unless the operator chose one.
  const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('--max-semi-space-size'));
  cluster.setupPrimary({ execArgv: [...process.execArgv, ...(chosen ? [] : [`--max-semi-space-size=${SEMI_SPACE_MB}`])] });
  let stopping = false;
  const fork = (): Worker => cluster.fork({ GATEWAY_WORKER: '1' });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error({ pid: worker.process.pid, code, signal }, 'gateway worker stopped unexpectedly; starting another');
    setTimeout(() => !stopping && fork(), RESTART_DELAY_MS).unref();
  });

  const listening = Array.from({ length: config.workers }, () => {
    const w = fork();
    return new Promise<void>((resolve, reject) => {
      w.once('listening', () => resolve());
      w.once('exit', (code) => reject(new Error(`a gateway worker exited during start-up (code ${code})`)));
    });
  });

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal, workers: Object.keys(cluster.workers ?? {}).length }, 'shutting down: stopping every worker gracefully');
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    const exits = workers.map(
      (w) =>
        new Promise<number>((resolve) => {
          if (w.isDead()) return resolve(w.process.exitCode ?? 0);
          const kill = setTimeout(() => w.process.kill('SIGKILL'), config.shutdownGraceMs + KILL_AFTER_MS);
          w.once('exit', (code) => {
            clearTimeout(kill);
            resolve(code ?? 1);
          });
          w.process.kill('SIGTERM');
        }),
    );
    void Promise.all(exits).then((codes) => {
      const failed = codes.filter((c) => c !== 0).length;
      if (failed) log.error({ failed }, 'some workers did not stop cleanly');
      log.flush();
      process.exit(failed ? 1 : 0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  await Promise.all(listening);
  log.info({ workers: config.workers, port: config.port }, 'gateway listening with several workers');
}
