/**
 * /files (docs/files.md): the stored-file object in the three shapes the reference negotiates per request — the
 * gateway's own (Anthropic's plus `downloadable`; `_shape: "gateway"`), OpenAI's Files API and Anthropic's Files API.
 */
import { Type } from '@sinclair/typebox';
import { StringEnum } from './common.js';

export const FILE_SHAPES = ['gateway', 'openai', 'anthropic'] as const;
export type FileShape = (typeof FILE_SHAPES)[number];

const FileId = Type.String({ description: "The file id: `gw_file_…`, or the provider's (`file-…`, `file_…`) for a file stored on its Files API.", examples: ['gw_file_0Qz3mYk2a7Hc1dE4fG5hJ6kL7m'] });

/** Fields of a file stored on a provider's own Files API (`POST /files?provider=…`). */
const OnProvider = {
  provider: Type.Optional(StringEnum(['openai', 'anthropic'], { description: "Set when the file is stored on that provider's own Files API (uploaded with `provider`); absent for the gateway's own files." })),
};

const GatewayLike = (shape: 'gateway' | 'anthropic') =>
  Type.Object(
    {
      _shape: Type.Literal(shape),
      id: FileId,
      type: Type.Literal('file'),
      filename: Type.String(),
      mime_type: Type.String({ description: 'Sniffed from the content.' }),
      size_bytes: Type.Integer({ minimum: 1 }),
      created_at: Type.String({ format: 'date-time' }),
      downloadable: Type.Boolean({ description: "Whether GET /files/{file_id}/content serves the bytes: true for the gateway's own files, false for files stored on a provider." }),
      ...OnProvider,
      ...(shape === 'gateway' ? { byok_credential_id: Type.Optional(Type.String({ description: 'The BYOK credential the provider file was stored with (and is deleted with).' })) } : {}),
    },
    { description: shape === 'gateway' ? 'A stored file (the gateway shape).' : "A stored file in Anthropic's Files API shape." },
  );

export const OpenAIFile = Type.Object(
  {
    _shape: Type.Literal('openai'),
    id: FileId,
    object: Type.Literal('file'),
    bytes: Type.Integer({ minimum: 1 }),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    filename: Type.String(),
    purpose: Type.String({ description: 'As uploaded (default user_data).' }),
    status: Type.Literal('processed'),
    ...OnProvider,
  },
  { description: "A stored file in OpenAI's Files API shape." },
);

/** A file stored on a provider's own Files API (`POST /files?provider=…`): the provider's object as it answered. */
export const ProviderFile = Type.Object(
  { _shape: StringEnum(['openai', 'anthropic']), id: Type.String({ description: "The provider's file id (e.g. `file-…` or `file_…`)." }) },
  { additionalProperties: true, description: "A file stored on the provider's own Files API (upload with `provider`): the provider's file object, every field as it answered." },
);

export const FileObject = Type.Union([GatewayLike('gateway'), OpenAIFile, GatewayLike('anthropic'), ProviderFile], { description: 'A stored file, in the negotiated shape (`_shape`).' });

const Ids = { first_id: Type.Union([Type.String(), Type.Null()]), last_id: Type.Union([Type.String(), Type.Null()]), has_more: Type.Boolean() };
export const FileList = Type.Union(
  [
    Type.Object({ _shape: Type.Literal('gateway'), data: Type.Array(GatewayLike('gateway')), ...Ids, cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for the next page; null at the end.' }) }),
    Type.Object({ _shape: Type.Literal('openai'), object: Type.Literal('list'), data: Type.Array(OpenAIFile), ...Ids }),
    Type.Object({ _shape: Type.Literal('anthropic'), data: Type.Array(GatewayLike('anthropic')), ...Ids }),
  ],
  { description: 'A page of files, oldest first, in the negotiated shape.' },
);

const ProviderDeleted = {
  provider_deleted: Type.Optional(
    Type.Boolean({ description: "For a file stored on a provider: true when the provider deleted its copy, false when it no longer had it or the BYOK credential that stored it was deleted." }),
  ),
};

export const FileDeleted = Type.Union(
  [
    Type.Object({ _shape: Type.Literal('gateway'), id: Type.String(), type: Type.Literal('file_deleted'), ...ProviderDeleted }),
    Type.Object({ _shape: Type.Literal('openai'), id: Type.String(), object: Type.Literal('file'), deleted: Type.Literal(true), ...ProviderDeleted }),
    Type.Object({ _shape: Type.Literal('anthropic'), id: Type.String(), type: Type.Literal('file_deleted'), ...ProviderDeleted }),
  ],
  { description: 'The file was deleted (negotiated shape).' },
);

const Scope = {
  workspace_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "Workspace id or slug (management keys; an inference key's own workspace otherwise, the default workspace when omitted)." })),
  provider: Type.Optional(StringEnum(['openai', 'anthropic'], { description: "Upload only: store the file on that provider's own Files API with the key's BYOK credential for it; the provider's file object is answered, and the gateway records it (listed, shown and deleted — on the provider too — by its id). Refused (400) on the other file routes." })),
};
export const FileScopeQuery = Type.Object(Scope, { additionalProperties: false });

const FileIdParam = Type.String({ minLength: 1, maxLength: 200, description: 'The file id.' });
export const FileParams = Type.Object({ file_id: FileIdParam });

export const FileListQuery = Type.Object(
  {
    ...Scope,
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'Files to return (1–1000, default 100).' }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400, description: 'Opaque cursor from a previous page.' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'OpenAI-style: the id to list after.' })),
    after_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Anthropic-style: the id to list after.' })),
    before_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Anthropic-style reverse cursor: not supported (400).' })),
    order: Type.Optional(StringEnum(['asc', 'desc'], { description: 'Only `asc` is supported.' })),
  },
  { additionalProperties: false },
);

export const FileUploadBody = Type.Object(
  {
    file: Type.Object({}, { additionalProperties: true, description: 'The file (binary, at most 100 MB). Its type is sniffed from its content.' }),
    purpose: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: "OpenAI clients' purpose (e.g. user_data); kept and echoed in OpenAI's shape." })),
  },
  { additionalProperties: true },
);
