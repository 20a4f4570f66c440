/**
 * Spending-limit windows. Resets happen at midnight UTC; weeks run Monday to Sunday.
 * Pure functions of a timestamp.
 */
import type { KeyUsageTotals, LimitReset } from '../store/types.js';
import { nanoToUsd, usdToNano } from './money.js';

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The last day's window starts (they change once a day; formatting dates costs more than the rest of a check). */
let lastWindows: { dayIndex: number; starts: Readonly<{ day: string; week: string; month: string }> } | null = null;

/** Start days (`YYYY-MM-DD`, UTC) of the current day, ISO week (Monday) and month. */
export function windowStarts(ms: number): Readonly<{ day: string; week: string; month: string }> {
  const dayIndex = Math.floor(ms / 86_400_000);
  if (lastWindows !== null && lastWindows.dayIndex === dayIndex) return lastWindows.starts;
  const starts = Object.freeze(computeWindowStarts(ms));
  if (Number.isFinite(dayIndex)) lastWindows = { dayIndex, starts };
  return starts;
}

function computeWindowStarts(ms: number): { day: string; week: string; month: string } {
  const d = new Date(ms);
  const dow = (d.getUTCDay() + 6) % 7; // Monday = 0
  const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - dow);
  const first = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { day: utcDay(ms), week: utcDay(monday), month: utcDay(first) };
}

/** Spend that counts against a limit with the given reset period. */
export function usageInWindow(t: KeyUsageTotals, reset: LimitReset | null, includeByok: boolean): number {
  const pick = (total: number, byok: number) => (includeByok ? nanoToUsd(usdToNano(total) + usdToNano(byok)) : total);
  switch (reset) {
    case 'daily':
      return pick(t.usage_daily, t.byok_usage_daily);
    case 'weekly':
      return pick(t.usage_weekly, t.byok_usage_weekly);
    case 'monthly':
      return pick(t.usage_monthly, t.byok_usage_monthly);
    default:
      return pick(t.usage, t.byok_usage);
  }
}

/** USD left under a limit, never negative (exact, in nano-dollars); null when the key has no limit. */
export function limitRemaining(limit: number | null, spent: number): number | null {
  if (limit === null) return null;
  return nanoToUsd(Math.max(0, usdToNano(limit) - usdToNano(spent)));
}

export function round12(n: number): number {
  return Math.round(n * 1e12) / 1e12;
}
