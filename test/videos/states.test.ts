import { describe, expect, it } from 'vitest';
import {
  canTransition,
  checkPath,
  IllegalTransitionError,
  isTerminal,
  pathTo,
  transition,
  VIDEO_STATUSES,
  VIDEO_TRANSITIONS,
  type VideoStatus,
} from '../../src/core/video-states.js';

const ALLOWED: Array<[VideoStatus, VideoStatus]> = [
  ['pending', 'in_progress'],
  ['in_progress', 'completed'],
  ['in_progress', 'failed'],
  ['in_progress', 'cancelled'],
  ['in_progress', 'expired'],
];

describe('video job state machine', () => {
  it('has exactly the six documented states', () => {
    expect([...VIDEO_STATUSES]).toEqual(['pending', 'in_progress', 'completed', 'failed', 'cancelled', 'expired']);
  });

  it.each(ALLOWED)('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
    expect(transition(from, to)).toBe(to);
  });

  it('rejects every other pair, self-loops included (30 of 36)', () => {
    let rejected = 0;
    for (const from of VIDEO_STATUSES) {
      for (const to of VIDEO_STATUSES) {
        if (ALLOWED.some(([a, b]) => a === from && b === to)) continue;
        expect(canTransition(from, to), `${from} → ${to}`).toBe(false);
        expect(() => transition(from, to), `${from} → ${to}`).toThrow(IllegalTransitionError);
        rejected++;
      }
    }
    expect(rejected).toBe(36 - ALLOWED.length);
  });

  it('has terminal states that nothing leaves', () => {
    for (const s of ['completed', 'failed', 'cancelled', 'expired'] as const) {
      expect(isTerminal(s)).toBe(true);
      expect(VIDEO_TRANSITIONS[s]).toEqual([]);
    }
    expect(isTerminal('pending')).toBe(false);
    expect(isTerminal('in_progress')).toBe(false);
  });

  it('refuses unknown states', () => {
    expect(canTransition('pending', 'done' as VideoStatus)).toBe(false);
    expect(() => transition('queued' as VideoStatus, 'in_progress')).toThrow(/Illegal video job transition queued → in_progress/);
  });

  it('the table cannot be changed at run time', () => {
    expect(Object.isFrozen(VIDEO_TRANSITIONS)).toBe(true);
    expect(Object.isFrozen(VIDEO_TRANSITIONS.pending)).toBe(true);
    expect(() => (VIDEO_TRANSITIONS.completed as VideoStatus[]).push('pending')).toThrow();
  });

  it('finds the chain of allowed transitions to a state, or none', () => {
    expect(pathTo('pending', 'in_progress')).toEqual(['pending', 'in_progress']);
    expect(pathTo('pending', 'cancelled')).toEqual(['pending', 'in_progress', 'cancelled']);
    expect(pathTo('in_progress', 'expired')).toEqual(['in_progress', 'expired']);
    expect(pathTo('completed', 'failed')).toBeNull();
    expect(pathTo('in_progress', 'pending')).toBeNull();
    expect(pathTo('failed', 'failed')).toBeNull();
  });

  it('checks whole paths step by step', () => {
    expect(() => checkPath(['pending', 'in_progress', 'completed'])).not.toThrow();
    expect(() => checkPath(['pending', 'completed'])).toThrow(IllegalTransitionError);
    expect(() => checkPath(['in_progress', 'completed', 'failed'])).toThrow(/completed → failed/);
    expect(() => checkPath(['pending'])).toThrow(IllegalTransitionError);
  });
});
