/**
 * Extension: GET/PATCH /organization/settings — the organization's provider preferences (allowed and ignored
 * providers and models, default provider sort) and privacy rules (data collection, zero data retention). They act as
 * a baseline guardrail for every key, in `/models/user` and in routing alike. Management keys only.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, Nullable, StringEnum, Timestamp } from '../schemas/common.js';
import { PROVIDER_SORTS } from '../schemas/inference.js';
import { orgSettingsView } from '../../services/guardrails.js';
import type { Services } from '../../services/index.js';

const List = (description: string) => Type.Optional(Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 1000 }), { description }));

/** Alias → model: keys without spaces (1 to 200 characters), values anything that resolves to one catalog model. */
const AliasMap = Type.Record(Type.String({ pattern: '^\\S{1,200}$' }), Type.String({ minLength: 1, maxLength: 200 }), { maxProperties: 1000 });

const PatchBody = Type.Object(
  {
    allowed_providers: List('Provider slugs (or endpoint tags) routing may use; null or [] = every provider.'),
    ignored_providers: List('Provider slugs (or endpoint tags) routing never uses.'),
    allowed_models: List('Model ids or canonical slugs keys may use (stored as canonical slugs); null or [] = every model.'),
    ignored_models: List('Model ids or canonical slugs keys may not use.'),
    default_provider_sort: Type.Optional(Nullable(StringEnum(PROVIDER_SORTS), { description: 'Used when neither the request nor the workspace sets a sort.' })),
    data_collection: Type.Optional(StringEnum(['allow', 'deny'] as const, { description: 'deny = no endpoint that trains on or retains prompts.' })),
    enforce_zdr: Type.Optional(Type.Boolean({ description: 'Only zero-data-retention endpoints.' })),
    model_aliases: Type.Optional(Nullable(AliasMap, { description: 'Model ids as clients send them (e.g. gpt-6.1-sol, claude-opus-4-8) → catalog models; the map is replaced, null or {} removes every alias (docs/agents.md).' })),
  },
  { minProperties: 1 },
);

const SettingsView = Type.Object({
  allowed_providers: Nullable(Type.Array(Type.String())),
  ignored_providers: Nullable(Type.Array(Type.String())),
  allowed_models: Nullable(Type.Array(Type.String())),
  ignored_models: Nullable(Type.Array(Type.String())),
  default_provider_sort: Nullable(Type.String()),
  data_collection: StringEnum(['allow', 'deny'] as const),
  enforce_zdr: Type.Boolean(),
  model_aliases: Nullable(Type.Record(Type.String(), Type.String({ description: 'Catalog model id.' })), { description: 'Model ids as clients send them → catalog model ids.' }),
  updated_at: Nullable(Timestamp),
});

export default async function organizationSettingsRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Organization'];
  app.get(
    '/organization/settings',
    { config: { auth: 'management' }, schema: { tags, summary: "Extension: the organization's provider preferences and privacy rules", response: { 200: Type.Object({ data: SettingsView }), ...errors(401, 403, 500) } } },
    async () => ({ data: orgSettingsView(await svc.guardrails.settings()) }),
  );

  app.patch<{ Body: Static<typeof PatchBody> }>(
    '/organization/settings',
    {
      config: { auth: 'management' },
      schema: { tags, summary: "Extension: change the organization's provider preferences and privacy rules (lists are replaced)", body: PatchBody, response: { 200: Type.Object({ data: SettingsView }), ...errors(400, 401, 403, 500) } },
    },
    async (req) => ({ data: orgSettingsView(await svc.guardrails.updateSettings(req.body)) }),
  );
}
