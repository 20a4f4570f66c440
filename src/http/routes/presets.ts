/**
 * Presets of a workspace. POST /presets/{slug}/{responses|chat/completions|messages} saves an inference body as a new
 * version (no inference runs); GET /presets, /presets/{slug}, /presets/{slug}/versions[/{version}].
 * Presets belong to a workspace: `workspace_id` (id or slug, an extension) selects it, the default workspace otherwise.
 */
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { errors, LimitQuery, Nullable, OffsetQuery, Timestamp, Uuid } from '../schemas/common.js';
import { ChatCompletionBody, MessagesBody, presetLimits, ResponsesBody } from '../schemas/inference.js';
import type { PresetSource } from '../../core/presets.js';
import type { Services } from '../../services/index.js';
import { releaseBody } from '../plugins/json-body.js';

const VersionView = Type.Object(
  {
    id: Uuid,
    preset_id: Uuid,
    version: Type.Integer(),
    config: Type.Record(Type.String(), Type.Unknown()),
    system_prompt: Nullable(Type.String()),
    creator_id: Type.String(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'PresetVersion' },
);
const PresetView = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    status: Type.String({ description: 'active, disabled or archived; a created preset is active.' }),
    status_updated_at: Nullable(Timestamp),
    designated_version_id: Uuid,
    designated_version: Type.Ref('PresetVersion'),
    creator_user_id: Type.String(),
    workspace_id: Uuid,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Preset' },
);

const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9][A-Za-z0-9._-]*$' }) });
const VersionParams = Type.Object({ slug: SlugParams.properties.slug, version: Type.Integer({ minimum: 1 }) });
const WorkspaceQuery = Type.Object({ workspace_id: Type.Optional(Type.String({ minLength: 1, description: 'Extension: workspace id or slug (default workspace when omitted).' })) });
const PageQuery = Type.Object({ ...WorkspaceQuery.properties, offset: Type.Optional(OffsetQuery), limit: Type.Optional(LimitQuery()) });

/** An inference body with the presets' own limits (`presetLimits`); a chat body's `messages` become optional (a preset keeps only configuration). */
const presetBody = (body: TObject, extra: Record<string, TSchema> = {}) =>
  Type.Object({ ...body.properties, ...presetLimits, ...extra }, { additionalProperties: body.additionalProperties as boolean | undefined });

const SOURCES: Array<{ path: string; source: PresetSource; body: TObject; summary: string }> = [
  { path: 'responses', source: 'responses', body: presetBody(ResponsesBody), summary: 'Create or update a preset from a responses request body' },
  { path: 'chat/completions', source: 'chat', body: presetBody(ChatCompletionBody, { messages: Type.Optional(ChatCompletionBody.properties.messages) }), summary: 'Create or update a preset from a chat completions request body' },
  { path: 'messages', source: 'messages', body: presetBody(MessagesBody), summary: 'Create or update a preset from a messages request body' },
];

export default async function presetRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  const tags = ['Presets'];
  const one = Type.Object({ data: Type.Ref('Preset') });

  for (const s of SOURCES) {
    app.post<{ Params: Static<typeof SlugParams>; Querystring: Static<typeof WorkspaceQuery>; Body: Record<string, unknown> }>(
      `/presets/:slug/${s.path}`,
      {
        config: { auth: 'management' },
        schema: {
          tags,
          summary: s.summary,
          description:
            'Creates the preset on a new slug (version 1, status active) or adds the next version to an existing one and designates it. ' +
            'Per-call content (input, messages, prompt, stream) is dropped; the system prompt comes from instructions, system or the system messages; every other field goes to config. 409 when two edits collide.',
          params: SlugParams,
          querystring: WorkspaceQuery,
          body: s.body,
          response: { 200: one, ...errors(400, 401, 403, 404, 409, 500) },
        },
      },
      async (req) => {
        try {
          const ws = await svc.workspaces.resolve(req.query.workspace_id);
          return { data: await svc.presets.save(ws.id, req.params.slug, s.source, req.body, req.key.creator_user_id ?? 'system') };
        } finally {
          // A large chat body was read into slabs (its path ends in /chat/completions): they go back to their pool.
          releaseBody(req);
        }
      },
    );
  }

  app.get<{ Querystring: Static<typeof PageQuery> }>(
    '/presets',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'List presets, most recently updated first', querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(Type.Ref('Preset')), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const ws = await svc.workspaces.resolve(req.query.workspace_id);
      return svc.presets.list(ws.id, req.query.offset ?? 0, req.query.limit ?? 50);
    },
  );

  app.get<{ Params: Static<typeof SlugParams>; Querystring: Static<typeof WorkspaceQuery> }>(
    '/presets/:slug',
    { config: { auth: 'management' }, schema: { tags, summary: 'Get a preset with its designated version', params: SlugParams, querystring: WorkspaceQuery, response: { 200: one, ...errors(400, 401, 403, 404, 500) } } },
    async (req) => {
      const ws = await svc.workspaces.resolve(req.query.workspace_id);
      return { data: await svc.presets.getWithVersion(ws.id, req.params.slug) };
    },
  );

  app.get<{ Params: Static<typeof SlugParams>; Querystring: Static<typeof PageQuery> }>(
    '/presets/:slug/versions',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'List the versions of a preset, oldest first', params: SlugParams, querystring: PageQuery, response: { 200: Type.Object({ data: Type.Array(Type.Ref('PresetVersion')), total_count: Type.Integer() }), ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const ws = await svc.workspaces.resolve(req.query.workspace_id);
      return svc.presets.versions(ws.id, req.params.slug, req.query.offset ?? 0, req.query.limit ?? 50);
    },
  );

  app.get<{ Params: Static<typeof VersionParams>; Querystring: Static<typeof WorkspaceQuery> }>(
    '/presets/:slug/versions/:version',
    {
      config: { auth: 'management' },
      schema: { tags, summary: 'Get one version of a preset', params: VersionParams, querystring: WorkspaceQuery, response: { 200: Type.Object({ data: Type.Ref('PresetVersion') }), ...errors(400, 401, 403, 404, 500) } },
    },
    async (req) => {
      const ws = await svc.workspaces.resolve(req.query.workspace_id);
      return { data: await svc.presets.version(ws.id, req.params.slug, req.params.version) };
    },
  );
}

export { PresetView, VersionView };
