/**
 * Per-key rate limits: at most `requests` requests per fixed window of `interval` seconds. Windows are aligned to the
 * epoch (a one-minute window starts on the minute), so every gateway instance agrees on the current window and a
 * shared counter (Redis) needs no coordination beyond one increment per request.
 *
 * Pure logic: no I/O.
 */

/** Longest window a rate limit may use (30 days). */
export const MAX_INTERVAL_S = 30 * 24 * 3600;

/** The accepted spelling of an interval: a positive integer and a unit, e.g. `10s`, `1m`, `6h`, `1d`. */
export const INTERVAL_PATTERN = '^[1-9][0-9]{0,6}[smhd]$';

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Seconds of an interval string (`90s`, `1m`, …), or null when malformed or longer than 30 days. */
export function parseInterval(text: string): number | null {
  const m = /^([1-9][0-9]{0,6})([smhd])$/.exec(text);
  if (!m) return null;
  const seconds = Number(m[1]) * UNIT_S[m[2]];
  return seconds <= MAX_INTERVAL_S ? seconds : null;
}

/** An interval in its largest exact unit (60 → `1m`, 90 → `90s`, 86400 → `1d`). */
export function formatInterval(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (seconds % UNIT_S[unit] === 0) return `${seconds / UNIT_S[unit]}${unit}`;
  return `${seconds}s`;
}

/** The window `now` (ms) falls in: its index (shared by every instance) and when it ends (ms). */
export function windowAt(nowMs: number, intervalS: number): { index: number; resetAt: number } {
  const ms = intervalS * 1000;
  const index = Math.floor(nowMs / ms);
  return { index, resetAt: (index + 1) * ms };
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  /** Requests left in the window after this one. */
  remaining: number;
  /** End of the window (ms since the epoch). */
  resetAt: number;
}

/** The decision for the `count`-th request of a window (counting this one). */
export function decide(count: number, limit: number, resetAt: number): RateDecision {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetAt };
}
