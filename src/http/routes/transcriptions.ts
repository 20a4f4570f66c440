/**
 * POST /audio/transcriptions: speech to text (OpenAI SDK `audio.transcriptions.create` compatible, and the hosted
 * API's JSON form with base64 `input_audio`). Reads the audio — a multipart `file` part, parsed here with busboy into
 * memory (at most 25 MiB), or the JSON's base64 —, validates, hands over to the transcription service. Errors use the
 * envelope; every request is a generation record (`X-Generation-Id`).
 */
import { Busboy, type BusboyInstance } from '@fastify/busboy';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, HttpError } from '../../core/errors.js';
import { errors } from '../schemas/common.js';
import { AUDIO_FORMATS, AUDIO_MIME, MAX_AUDIO_BYTES, TranscriptionJsonBody, TranscriptionMultipartBody, TranscriptionResponse } from '../schemas/transcriptions.js';
import { answerOnce, MetadataHeader } from './inference.js';
import { isTextTranscriptFormat, renderTranscript, TEXT_TRANSCRIPT_FORMATS } from '../../core/transcript-formats.js';
import type { AudioFile } from '../../providers/openai/transcriptions.js';
import type { TranscriptionRequest } from '../../services/transcriptions.js';
import type { Services } from '../../services/index.js';

/** An uploaded file as the multipart parser hands it over. */
interface Upload {
  data: Buffer;
  filename: string;
  mime: string;
}

const isUpload = (v: unknown): v is Upload => typeof v === 'object' && v !== null && Buffer.isBuffer((v as Upload).data);

/** The format of an upload: its file extension, else its part Content-Type. */
function uploadFormat(u: Upload): string | null {
  const ext = /\.([a-z0-9]+)$/i.exec(u.filename)?.[1]?.toLowerCase();
  if (ext && AUDIO_FORMATS.includes(ext)) return ext;
  const byMime = Object.entries(AUDIO_MIME).find(([, m]) => m === u.mime.split(';')[0].trim().toLowerCase());
  return byMime ? byMime[0] : null;
}

/** multipart/form-data → a plain object: text fields (numbers and the `provider` JSON parsed, `x[]` fields as lists) and `file` in memory. */
function parseMultipart(request: FastifyRequest, payload: NodeJS.ReadableStream, done: (err: Error | null, body?: unknown) => void): void {
  let bb: BusboyInstance;
  try {
    bb = new Busboy({ headers: request.headers as never, limits: { fileSize: MAX_AUDIO_BYTES, files: 1, fields: 20, fieldSize: 64 * 1024 } });
  } catch (err) {
    return done(badRequest(`Malformed multipart body: ${(err as Error).message}`));
  }
  const body: Record<string, unknown> = {};
  let failed: Error | null = null;
  const fail = (e: Error) => {
    if (!failed) failed = e;
  };
  bb.on('field', (name, value) => {
    if (name.endsWith('[]')) {
      const key = name.slice(0, -2);
      body[key] = [...((body[key] as string[] | undefined) ?? []), value];
    } else if (name === 'temperature' && value.trim() !== '' && Number.isFinite(Number(value))) body[name] = Number(value);
    else if (name === 'provider') {
      // Routing preferences as a JSON text field (validated by the schema like the JSON form's).
      try {
        body[name] = JSON.parse(value);
      } catch {
        body[name] = value;
      }
    }
    else if (name === 'timestamp_granularities') body[name] = [...((body[name] as string[] | undefined) ?? []), value];
    else body[name] = value;
  });
  bb.on('file', (name, stream, filename, _enc, mime) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('limit', () => fail(new HttpError(413, `The audio file is larger than ${MAX_AUDIO_BYTES / 1024 / 1024} MiB`)));
    stream.on('end', () => {
      body[name] = { data: Buffer.concat(chunks), filename: filename ?? 'audio', mime: mime ?? 'application/octet-stream' } satisfies Upload;
    });
  });
  bb.on('filesLimit', () => fail(badRequest('Only one file may be uploaded (file)', { field: 'file' })));
  bb.on('error', (err) => fail(badRequest(`Malformed multipart body: ${(err as Error).message}`)));
  bb.on('finish', () => (failed ? done(failed) : done(null, body)));
  payload.pipe(bb);
}

/** The service's request from either body form (the schema has already validated the fields). */
function toRequest(body: Record<string, unknown>): TranscriptionRequest {
  let audio: AudioFile;
  if (isUpload(body.file)) {
    const format = uploadFormat(body.file);
    if (!format) throw badRequest(`file: unsupported audio format "${body.file.filename}" (${body.file.mime}); use one of ${AUDIO_FORMATS.join(', ')}`, { field: 'file' });
    if (body.file.data.length === 0) throw badRequest('file: the audio file is empty', { field: 'file' });
    audio = { data: body.file.data, filename: /\.[a-z0-9]+$/i.test(body.file.filename) ? body.file.filename : `audio.${format}`, mime: AUDIO_MIME[format] };
  } else if (body.file !== undefined) {
    throw badRequest('file must be an uploaded file part', { field: 'file' });
  } else {
    const input = body.input_audio as { data: string; format: string };
    const b64 = input.data.replace(/^data:[^;,]+;base64,/, '');
    if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(b64)) throw badRequest('input_audio.data must be base64 (or a data: URL)', { field: 'input_audio.data' });
    const data = Buffer.from(b64, 'base64');
    if (data.length === 0) throw badRequest('input_audio.data: the audio is empty', { field: 'input_audio.data' });
    if (data.length > MAX_AUDIO_BYTES) throw new HttpError(413, `The audio is larger than ${MAX_AUDIO_BYTES / 1024 / 1024} MiB`);
    audio = { data, filename: `audio.${input.format}`, mime: AUDIO_MIME[input.format] };
  }
  return {
    model: body.model as string,
    audio,
    language: body.language as string | undefined,
    prompt: body.prompt as string | undefined,
    temperature: body.temperature as number | undefined,
    response_format: (body.response_format as TranscriptionRequest['response_format'] | undefined) ?? 'json',
    timestamp_granularities: body.timestamp_granularities as TranscriptionRequest['timestamp_granularities'],
    provider: (body.provider as TranscriptionRequest['provider']) ?? null,
  };
}

export default async function transcriptionRoutes(app: FastifyInstance, { svc }: { svc: Services }) {
  await app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', parseMultipart);
    scope.post<{ Body: Record<string, unknown> }>(
      '/audio/transcriptions',
      {
        config: { auth: 'inference' },
        // Base64 JSON of a 25 MiB file is ~34 MiB.
        bodyLimit: Math.max(svc.config.bodyLimit, 36 * 1024 * 1024),
        schema: {
          tags: ['Speech-to-text'],
          summary: 'Create a transcription: the text of an audio file (OpenAI SDK `audio.transcriptions.create` compatible; multipart `file` or JSON base64 `input_audio`)',
          headers: MetadataHeader,
          body: { content: { 'application/json': { schema: TranscriptionJsonBody }, 'multipart/form-data': { schema: TranscriptionMultipartBody } } },
          response: {
            200: {
              description: 'The transcript: JSON for `json` and `verbose_json`; plain text for `text`, SubRip for `srt`, WebVTT for `vtt`.',
              content: {
                'application/json': { schema: TranscriptionResponse },
                'text/plain': { schema: Type.String({ description: '`text` or `srt`.' }) },
                'text/vtt': { schema: Type.String({ description: '`vtt`.' }) },
              },
            },
            ...errors(400, 401, 402, 403, 404, 413, 415, 429, 500, 502, 503, 524, 529) },
        },
      },
      async (req, reply) => {
        const request = toRequest(req.body);
        const body = await answerOnce(
          req,
          reply,
          (call) => svc.transcriptions.prepare(request, call),
          (p, call) => svc.transcriptions.transcribe(p, call),
        );
        // text, srt and vtt: plain text (the cost is in the generation record, GET /generation?id=<X-Generation-Id>).
        if (!isTextTranscriptFormat(request.response_format)) return body;
        reply.type(TEXT_TRANSCRIPT_FORMATS[request.response_format]);
        return renderTranscript(request.response_format, body);
      },
    );
  });
}
