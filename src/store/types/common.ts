/** Types every part of the store shares. */

export interface Page<T> {
  rows: T[];
  total: number;
}

/** A unique constraint or a concurrent change: the operation did not happen and may be retried. */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}
