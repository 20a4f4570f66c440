/**
 * Metrics across the workers of one host (GATEWAY_WORKERS, src/cluster.ts): a worker answering GET /metrics asks the
 * primary, which gathers every worker's registries through prom-client's AggregatorRegistry (counters and histograms
 * summed, per-process gauges by their own aggregator) and sends the text back.
 */
import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

export const METRICS_REQ = 'gateway:metrics-req';
export const METRICS_RES = 'gateway:metrics-res';

export interface MetricsRequest {
  type: typeof METRICS_REQ;
  id: number;
}
export interface MetricsResponse {
  type: typeof METRICS_RES;
  id: number;
  text?: string;
  error?: string;
}

/** Whether this process is a worker forked by the primary of GATEWAY_WORKERS. */
export const isClusterWorker = (): boolean => cluster.isWorker;

/**
 * In a worker: serves the worker's registries to the primary's aggregation, and returns how to fetch the whole
 * cluster's exposition text (for GET /metrics, whichever worker it reaches).
 */
export function clusterMetricsOf(registries: Registry[]): () => Promise<string> {
  // Constructing it installs prom-client's worker-side listener; it then reports `registries`.
  void new AggregatorRegistry();
  AggregatorRegistry.setRegistries(registries);
  let next = 0;
  const pending = new Map<number, { resolve: (t: string) => void; reject: (e: Error) => void }>();
  process.on('message', (msg: MetricsResponse) => {
    if (msg?.type !== METRICS_RES) return;
    const p = pending.get(msg.id);
    pending.delete(msg.id);
    if (msg.error !== undefined) p?.reject(new Error(msg.error));
    else p?.resolve(msg.text ?? '');
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the primary did not answer with the cluster metrics'));
      }, 6_000);
      pending.set(id, {
        resolve: (t) => (clearTimeout(timer), resolve(t)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      process.send?.({ type: METRICS_REQ, id } satisfies MetricsRequest);
    });
}
