/**
 * The attempt observer of a request (services/attempts/runner.ts): I/O logging's provider errors and tracing's attempt
 * spans. Undefined when neither is on, so the runner calls nothing.
 */
import type { IoCapture } from '../../core/io-log.js';
import type { AttemptObserver, AttemptTarget } from '../attempts/runner.js';
import { ioObserver } from './io-logging.js';
import type { RequestTrace } from './tracing.js';

export function watchAttempts<A extends AttemptTarget>(io: IoCapture | null, trace: RequestTrace | undefined, outcome: { readonly ttftMs: number | null } | null): AttemptObserver<A> | undefined {
  if (!trace) return io ? ioObserver<A>(io) : undefined;
  if (outcome) trace.ttft = () => outcome.ttftMs;
  const spans = trace.observer<A>();
  if (!io) return spans;
  const log = ioObserver<A>(io);
  return {
    started: (a, i) => spans.started(a, i),
    failed: (a, e) => (log.failed(a, e), spans.failed(a, e)),
    succeeded: (a) => spans.succeeded(a),
  };
}
