/**
 * A request its limits refuse before anything is sent upstream still belongs in the request log: this wraps a key's
 * spend hooks (services/attempts/runner.ts) so that a 402 at the first admission is reported once (`refused`, which
 * records the generation with status 402, no attempt and no cost). A fallback refused later is the runner's to log.
 */
import { HttpError } from '../../core/errors.js';
import type { AttemptHooks, AttemptTarget } from './runner.js';

export function recordingRefusal<A extends AttemptTarget>(hooks: AttemptHooks<A> | undefined, refused: (err: HttpError) => void): AttemptHooks<A> | undefined {
  if (!hooks) return undefined;
  let admitted = false;
  const failed = (err: unknown): never => {
    if (!admitted && err instanceof HttpError && err.status === 402) refused(err);
    throw err;
  };
  const ok = <T>(admission: T): T => {
    admitted = true;
    return admission;
  };
  return {
    // Synchronous when the hooks are (no promise per attempt on the spend fast path).
    admit: (a) => {
      let r: ReturnType<AttemptHooks<A>['admit']>;
      try {
        r = hooks.admit(a);
      } catch (err) {
        return failed(err);
      }
      return r instanceof Promise ? r.then(ok, failed) : ok(r);
    },
  };
}
