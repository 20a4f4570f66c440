/** What every migration is written against: the dialect and its column types. */
import type { Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

export interface ColumnTypes {
  ts: 'timestamptz' | 'text';
  json: 'jsonb' | 'text';
  bool: 'boolean' | 'integer';
  dbl: 'double precision' | 'real';
}

export function columnTypes(dialect: Dialect): ColumnTypes {
  return dialect === 'postgres'
    ? { ts: 'timestamptz', json: 'jsonb', bool: 'boolean', dbl: 'double precision' }
    : { ts: 'text', json: 'text', bool: 'integer', dbl: 'real' };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Db = Kysely<any>;
