/**
 * Credits (docs/spend.md, "Credits"): GET /credits (the hosted router's shape), and our own ledger endpoints —
 * POST /credits/adjustments (a top-up or an adjustment, one ledger row each) and GET /credits/adjustments (the
 * ledger, newest first). Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, LimitQuery, Nullable, OffsetQuery, StringEnum, Timestamp, Uuid } from '../schemas/common.js';
import type { Services } from '../../services/index.js';

const Balance = Type.Object(
  {
    total_credits: Type.Number({ description: 'Total credits purchased (the sum of the ledger), USD' }),
    total_usage: Type.Number({ description: 'Total credits used (everything billed, BYOK excluded), USD' }),
  },
  { description: 'Total credits purchased and used' },
);

const Entry = Type.Object(
  {
    id: Uuid,
    amount_usd: Type.Number({ description: 'USD added (negative: taken away by an adjustment)' }),
    kind: StringEnum(['top_up', 'adjustment'] as const),
    note: Nullable(Type.String()),
    created_by: Nullable(Type.String({ description: "The management key's hash that made the change, or `cli`" })),
    created_at: Timestamp,
  },
  { description: 'One change of the credit balance (never edited, never deleted)' },
);

const AdjustBody = Type.Object(
  {
    // Bounded so that the amount stays an exact integer of nano-dollars (2^53 nano-dollars is about $9 million).
    amount_usd: Type.Number({ minimum: -1_000_000, maximum: 1_000_000, description: 'USD to add (a top_up: positive) or to add or take away (an adjustment: either sign, not zero), at most 1,000,000 either way' }),
    kind: Type.Optional(StringEnum(['top_up', 'adjustment'] as const, { default: 'top_up' })),
    note: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false },
);

const ListQuery = Type.Object({ offset: Type.Optional(OffsetQuery), limit: Type.Optional(LimitQuery()) });

export default async function creditRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Credits'];
  app.get(
    '/credits',
    { config: { auth: 'management' }, schema: { tags, summary: 'Total credits purchased and used', response: { 200: Type.Object({ data: Balance }), ...errors(401, 403, 500) } } },
    async () => ({ data: await svc.credits.balance() }),
  );

  app.post<{ Body: Static<typeof AdjustBody> }>(
    '/credits/adjustments',
    {
      config: { auth: 'management' },
      schema: {
        tags,
        summary: 'Add credits (top_up) or correct the balance (adjustment); every change is a ledger row',
        body: AdjustBody,
        response: { 201: Type.Object({ data: Entry, balance: Balance }), ...errors(400, 401, 403, 500) },
      },
    },
    async (req, reply) => {
      const entry = await svc.credits.add(req.body, req.key.hash);
      reply.code(201);
      return { data: entry, balance: await svc.credits.balance() };
    },
  );

  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/credits/adjustments',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'The credit ledger, newest first', querystring: ListQuery, response: { 200: Type.Object({ data: Type.Array(Entry), total_count: Type.Integer() }), ...errors(400, 401, 403, 500) } },
    },
    async (req) => {
      const page = await svc.credits.list(req.query.offset ?? 0, req.query.limit ?? 50);
      return { data: page.rows, total_count: page.total };
    },
  );
}
