/**
 * Schema building blocks. TypeBox schemas are JSON Schema: one definition validates requests (Ajv),
 * types the handlers (Static<>) and documents the API (the served OpenAPI document).
 */
import { Type, type TSchema, type Static, type SchemaOptions } from '@sinclair/typebox';

/** `T | null`, written as a JSON Schema type array so that validation messages stay simple. */
export function Nullable<T extends TSchema>(schema: T, options: SchemaOptions = {}) {
  const s = schema as unknown as { type?: string | string[]; enum?: unknown[] };
  if (typeof s.type === 'string') {
    const copy: Record<string, unknown> = { ...schema, ...options, type: [s.type, 'null'] };
    if (Array.isArray(s.enum)) copy.enum = [...s.enum, null];
    return Type.Unsafe<Static<T> | null>(copy);
  }
  return Type.Unsafe<Static<T> | null>({ ...options, anyOf: [schema, { type: 'null' }] });
}

/** A string enum as a plain `enum` (clear messages, compact OpenAPI). */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Integer({ description: 'Equals the HTTP status.' }),
      message: Type.String(),
      metadata: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    }),
    gateway_metadata: Type.Optional(Nullable(Type.Object({}, { additionalProperties: true }))),
    user_id: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'ErrorEnvelope', description: 'Every error response, on every route.' },
);

/** Responses for the given error statuses, all with the envelope. */
export function errors(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const s of statuses) out[s] = Type.Ref('ErrorEnvelope');
  return out;
}

/** `metadata` of an inference request: at most 16 pairs; keys at most 64 characters; values at most 512 characters. */
export const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
  maxProperties: 16,
  propertyNames: { maxLength: 64 },
  description: 'Up to 16 string pairs; keys at most 64 characters; values at most 512 characters.',
});

/** `metadata` of a preset (the spec's presets body): as above, and keys without brackets. */
export const PresetMetadata = Type.Record(Type.String(), Type.String({ maxLength: 512 }), {
  maxProperties: 16,
  propertyNames: { maxLength: 64, pattern: '^[^\\[\\]]*$' },
  description: 'Up to 16 string pairs; keys at most 64 characters without brackets; values at most 512 characters.',
});

export const OffsetQuery = Type.Integer({ minimum: 0, default: 0, description: 'Records to skip.' });
export const LimitQuery = (def = 50, max = 100) => Type.Integer({ minimum: 1, maximum: max, default: def, description: `Records to return (1 to ${max}, default ${def}).` });

export const DeletedResponse = Type.Object({ deleted: Type.Literal(true) });

export const Timestamp = Type.String({ format: 'date-time' });
export const Uuid = Type.String({ format: 'uuid' });
