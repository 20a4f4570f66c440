/**
 * Video generation job states and their transitions. PURE: no I/O.
 *
 *   pending ──► in_progress ──► completed
 *                          ├──► failed
 *                          ├──► cancelled
 *                          └──► expired
 *
 * `pending`: stored, not yet picked up by a worker. `in_progress`: a worker took it (it then has a generation id) and
 * submits it upstream or polls the upstream job. The four others are terminal: nothing leaves them. A job that must end
 * before it was ever picked up (cancelled or expired while pending) goes through `in_progress` in the same database
 * transaction (see `pathTo`), so every stored change is one edge of this table.
 */

export const VIDEO_STATUSES = ['pending', 'in_progress', 'completed', 'failed', 'cancelled', 'expired'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];
export type TerminalVideoStatus = 'completed' | 'failed' | 'cancelled' | 'expired';

/** The transition table: the states each state may move to. */
export const VIDEO_TRANSITIONS: Readonly<Record<VideoStatus, readonly VideoStatus[]>> = Object.freeze({
  pending: Object.freeze(['in_progress'] as const),
  in_progress: Object.freeze(['completed', 'failed', 'cancelled', 'expired'] as const),
  completed: Object.freeze([] as const),
  failed: Object.freeze([] as const),
  cancelled: Object.freeze([] as const),
  expired: Object.freeze([] as const),
});

export const ACTIVE_VIDEO_STATUSES: readonly VideoStatus[] = ['pending', 'in_progress'];
export const TERMINAL_VIDEO_STATUSES: readonly TerminalVideoStatus[] = ['completed', 'failed', 'cancelled', 'expired'];

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: string,
    readonly to: string,
  ) {
    super(`Illegal video job transition ${from} → ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

export function isVideoStatus(s: unknown): s is VideoStatus {
  return typeof s === 'string' && (VIDEO_STATUSES as readonly string[]).includes(s);
}

export function isTerminal(s: VideoStatus): s is TerminalVideoStatus {
  return VIDEO_TRANSITIONS[s].length === 0;
}

/** Whether `from → to` is an edge of the table. */
export function canTransition(from: VideoStatus, to: VideoStatus): boolean {
  return isVideoStatus(from) && isVideoStatus(to) && VIDEO_TRANSITIONS[from].includes(to);
}

/** The guard: returns `to` when `from → to` is allowed, throws IllegalTransitionError otherwise. */
export function transition(from: VideoStatus, to: VideoStatus): VideoStatus {
  if (!canTransition(from, to)) throw new IllegalTransitionError(String(from), String(to));
  return to;
}

/** Checks that every consecutive pair of `path` is an allowed transition (throws otherwise); a path has ≥ 2 states. */
export function checkPath(path: readonly VideoStatus[]): void {
  if (path.length < 2) throw new IllegalTransitionError(String(path[0] ?? '?'), '(nothing)');
  for (let i = 1; i < path.length; i++) transition(path[i - 1], path[i]);
}

/** The shortest chain of allowed transitions from `from` to `to` (both included), or null when `to` is unreachable. */
export function pathTo(from: VideoStatus, to: VideoStatus): VideoStatus[] | null {
  if (!isVideoStatus(from) || !isVideoStatus(to) || from === to) return null;
  const queue: VideoStatus[][] = [[from]];
  const seen = new Set<VideoStatus>([from]);
  while (queue.length > 0) {
    const path = queue.shift()!;
    for (const next of VIDEO_TRANSITIONS[path[path.length - 1]]) {
      if (next === to) return [...path, next];
      if (!seen.has(next)) {
        seen.add(next);
        queue.push([...path, next]);
      }
    }
  }
  return null;
}
