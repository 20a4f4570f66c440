/**
 * File inputs of an inference request (docs/files.md, docs/plugins.md), a step of request preparation: file parts
 * that name an uploaded file by id (chat `file.file_id`, responses `input_file.file_id`, messages `document` with
 * `source.type: "file"`) get the file's bytes inline; PDFs go to the upstream as they are (the file-parser plugin's
 * `native` engine) or as their text (`text` engine: extracted here with unpdf, cached by content hash), so a model
 * whose upstream cannot read PDFs can still answer about one. The default engine is native when every requested
 * model reads files through an upstream that receives the part as sent, else text.
 * Image parts may name a stored image the same way (chat `image_url.url` or `image_url.file_id`, responses
 * `input_image.file_id`, messages `image` with `source.type: "file"`): it goes inline (a data URL / base64 source), so
 * every upstream gets it — Gemini as `inlineData`. Gemini requests name stored files in `fileData.fileUri`: any type
 * goes inline as `inlineData` (PDFs too, unless the text engine applies).
 */
import { createHash } from 'node:crypto';
import { badRequest } from '../../core/errors.js';
import type { PdfEngine, PluginPipelineEntry } from '../../core/plugins.js';
import type { Store } from '../../store/types.js';
import type { FileService } from '../files/index.js';
import { lazyConversation } from '../../core/lazy-body.js';

type Obj = Record<string, unknown>;
const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One file part found in a body, with how to rewrite it in place. */
interface FilePart {
  where: string;
  /** An image part (only images may be named there), a file part, or a Gemini media part (any type, inline data). */
  kind: 'file' | 'image' | 'media';
  /** A stored file's id, or inline bytes (data URL / base64), or neither (a URL: left alone). */
  fileId: string | null;
  inline: { mime: string; data: Buffer } | null;
  filename: string | null;
  replace(part: Obj): void;
  /** The part as inline bytes (native), in the API's own shape. */
  inlinePart(mime: string, data: Buffer, filename: string): Obj;
  textPart(text: string): Obj;
}

function dataUrl(s: unknown): { mime: string; data: Buffer } | null {
  if (typeof s !== 'string') return null;
  const m = /^data:([^;,]+);base64,/.exec(s);
  return m ? { mime: m[1].toLowerCase(), data: Buffer.from(s.slice(m[0].length), 'base64') } : null;
}

/** Ids of stored files (services/files): an image URL or a Gemini fileUri of this shape names one. */
const isFileId = (v: unknown): v is string => typeof v === 'string' && v.startsWith('gw_file_');
const dataUrlOf = (mime: string, data: Buffer) => `data:${mime};base64,${data.toString('base64')}`;

/** A file part's location and how to put its replacement there. */
type Slot = Pick<FilePart, 'where' | 'replace'>;
/** One API's recognizer: the part as a FilePart when it is one this API may carry, else null. */
type PartReader = (p: Obj, at: Slot) => FilePart | null;

/** The content lists of a body that may hold file parts, each with its path. */
function partLists(api: string, body: Obj): Array<[unknown[], string]> {
  const lists: Array<[unknown[], string]> = [];
  if (api === 'gemini') {
    (Array.isArray(body.contents) ? body.contents : []).forEach((c, i) => isObj(c) && Array.isArray(c.parts) && lists.push([c.parts, `contents[${i}].parts`]));
  } else if (api === 'chat' || api === 'messages') {
    (Array.isArray(body.messages) ? body.messages : []).forEach((m, i) => isObj(m) && Array.isArray(m.content) && lists.push([m.content, `messages[${i}].content`]));
  } else if (api === 'responses' && Array.isArray(body.input)) {
    body.input.forEach((m, i) => isObj(m) && Array.isArray(m.content) && lists.push([m.content, `input[${i}].content`]));
  }
  return lists;
}

/** Gemini: a `fileData` naming a stored file. Gemini reads every stored type (images, PDFs, audio, text) as inline data; its fileUri means Google's Files API. */
const geminiPart: PartReader = (p, at) => {
  if (!isObj(p.fileData) || !isFileId(p.fileData.fileUri)) return null;
  return {
    ...at,
    kind: 'media',
    fileId: p.fileData.fileUri,
    inline: null,
    filename: null,
    inlinePart: (mime, data) => ({ inlineData: { mimeType: mime, data: data.toString('base64') } }),
    textPart: (text) => ({ text }),
  };
};

/** Chat: an `image_url` naming a stored image, or a `file` part. */
const chatPart: PartReader = (p, at) => {
  if (p.type === 'image_url' && isObj(p.image_url) && (isFileId(p.image_url.file_id) || isFileId(p.image_url.url))) {
    const iu = p.image_url;
    return {
      ...at,
      kind: 'image',
      fileId: (isFileId(iu.file_id) ? iu.file_id : iu.url) as string,
      inline: null,
      filename: null,
      inlinePart: (mime, data) => ({ ...p, image_url: { url: dataUrlOf(mime, data), ...(typeof iu.detail === 'string' ? { detail: iu.detail } : {}) } }),
      textPart: (text) => ({ type: 'text', text }),
    };
  }
  if (p.type !== 'file' || !isObj(p.file)) return null;
  const f = p.file;
  return {
    ...at,
    kind: 'file',
    fileId: typeof f.file_id === 'string' ? f.file_id : null,
    inline: dataUrl(f.file_data),
    filename: typeof f.filename === 'string' ? f.filename : null,
    inlinePart: (mime, data, filename) => ({ type: 'file', file: { filename, file_data: `data:${mime};base64,${data.toString('base64')}` } }),
    textPart: (text) => ({ type: 'text', text }),
  };
};

/** Responses: an `input_image` naming a stored image, or an `input_file`. */
const responsesPart: PartReader = (p, at) => {
  if (p.type === 'input_image' && isFileId(p.file_id)) {
    return {
      ...at,
      kind: 'image',
      fileId: p.file_id,
      inline: null,
      filename: null,
      inlinePart: (mime, data) => {
        const { file_id: _, ...rest } = p;
        return { ...rest, image_url: dataUrlOf(mime, data) };
      },
      textPart: (text) => ({ type: 'input_text', text }),
    };
  }
  if (p.type !== 'input_file') return null;
  return {
    ...at,
    kind: 'file',
    fileId: typeof p.file_id === 'string' ? p.file_id : null,
    inline: dataUrl(p.file_data),
    filename: typeof p.filename === 'string' ? p.filename : null,
    inlinePart: (mime, data, filename) => ({ type: 'input_file', filename, file_data: `data:${mime};base64,${data.toString('base64')}` }),
    textPart: (text) => ({ type: 'input_text', text }),
  };
};

/** Messages: an `image` whose source names a stored file, or a `document`. */
const messagesPart: PartReader = (p, at) => {
  if (p.type === 'image' && isObj(p.source) && p.source.type === 'file' && isFileId(p.source.file_id)) {
    return {
      ...at,
      kind: 'image',
      fileId: p.source.file_id,
      inline: null,
      filename: null,
      inlinePart: (mime, data) => ({ ...p, source: { type: 'base64', media_type: mime, data: data.toString('base64') } }),
      textPart: (text) => ({ type: 'text', text }),
    };
  }
  if (p.type !== 'document' || !isObj(p.source)) return null;
  const s = p.source;
  return {
    ...at,
    kind: 'file',
    fileId: s.type === 'file' && typeof s.file_id === 'string' ? s.file_id : null,
    inline: s.type === 'base64' && typeof s.data === 'string' && typeof s.media_type === 'string' ? { mime: s.media_type, data: Buffer.from(s.data, 'base64') } : null,
    filename: typeof p.title === 'string' ? p.title : null,
    inlinePart: (mime, data) =>
      mime.startsWith('text/') ? { type: 'document', source: { type: 'text', media_type: 'text/plain', data: data.toString('utf8') } } : { type: 'document', source: { type: 'base64', media_type: mime, data: data.toString('base64') } },
    textPart: (text) => ({ type: 'text', text }),
  };
};

const PART_READERS: ReadonlyMap<string, PartReader> = new Map([
  ['gemini', geminiPart],
  ['chat', chatPart],
  ['responses', responsesPart],
  ['messages', messagesPart],
]);

function partsOf(api: string, body: Obj): FilePart[] {
  const read = PART_READERS.get(api);
  if (!read) return [];
  const out: FilePart[] = [];
  for (const [list, at] of partLists(api, body)) {
    list.forEach((p, j) => {
      if (!isObj(p)) return;
      const part = read(p, { where: `${at}[${j}]`, replace: (next: Obj) => (list[j] = next) });
      if (part) out.push(part);
    });
  }
  return out;
}

/**
 * Inline PDFs of a Gemini body (`inlineData` with `application/pdf`): the text engine replaces them with their text;
 * otherwise they go as sent (an IR document for another protocol).
 */
function geminiInlinePdfs(api: string, body: Obj): FilePart[] {
  if (api !== 'gemini' || !Array.isArray(body.contents)) return [];
  const out: FilePart[] = [];
  body.contents.forEach((c, i) => {
    if (!isObj(c) || !Array.isArray(c.parts)) return;
    const list: unknown[] = c.parts;
    list.forEach((p, j) => {
      const d = isObj(p) ? p.inlineData : null;
      if (!isObj(d) || typeof d.mimeType !== 'string' || d.mimeType.toLowerCase() !== 'application/pdf' || typeof d.data !== 'string') return;
      out.push({
        kind: 'file', where: `contents[${i}].parts[${j}]`, replace: (part) => (list[j] = part),
        fileId: null,
        inline: { mime: 'application/pdf', data: Buffer.from(d.data, 'base64') },
        filename: null,
        inlinePart: (mime, data) => ({ inlineData: { mimeType: mime, data: data.toString('base64') } }),
        textPart: (text) => ({ text }),
      });
    });
  });
  return out;
}

const fileParts = (api: string, body: Obj): FilePart[] => [...partsOf(api, body), ...geminiInlinePdfs(api, body)];

/** The slot a part is read with when only asked whether it is a file part (the answer is not kept). */
const PROBE: Slot = { where: '', replace: () => undefined };

/**
 * Whether a body has any file part (cheap: most requests have none, and skip the step). Run on every inference
 * request: it walks the lists `partLists` names without building their paths nor a slot per part, and stops at the
 * first file part.
 */
export function hasFileParts(api: string, body: Obj): boolean {
  // A conversation still lazy (core/lazy-body.ts) has text contents only.
  if (lazyConversation(body, api === 'responses' ? 'input' : api === 'gemini' ? 'contents' : 'messages')) return false;
  const read = PART_READERS.get(api);
  if (!read) return false;
  const outer = api === 'gemini' ? body.contents : api === 'responses' ? body.input : body.messages;
  if (Array.isArray(outer)) {
    for (const m of outer) {
      const list = isObj(m) ? (api === 'gemini' ? m.parts : m.content) : null;
      if (Array.isArray(list)) for (const p of list) if (isObj(p) && read(p, PROBE) !== null) return true;
    }
  }
  return api === 'gemini' && geminiInlinePdfs(api, body).length > 0;
}

export interface FileInputContext {
  workspaceId: string;
  /** file-parser: off (PDFs go as sent), or the engine asked for (null: chosen by `modelsReadFiles`). */
  parser: { enabled: boolean; engine: PdfEngine | null };
  modelsReadFiles: boolean;
}

export class FileInputs {
  constructor(private readonly deps: { files: FileService; store: Store; now: () => number }) {}

  /** The body with its file parts resolved (a copy when anything changed), and what the file-parser did. */
  async apply(api: string, input: Obj, ctx: FileInputContext): Promise<{ body: Obj; pipeline: PluginPipelineEntry[] }> {
    const body = structuredClone(input);
    const parts = fileParts(api, body);
    const parsed: Array<{ filename: string; pages: number; cached: boolean }> = [];
    const engine: PdfEngine = !ctx.parser.enabled ? 'native' : (ctx.parser.engine ?? (ctx.modelsReadFiles ? 'native' : 'text'));
    for (const p of parts) {
      // A provider's file id (stored on its Files API, docs/files.md): it goes as sent, for that provider to read.
      if (p.fileId !== null && !isFileId(p.fileId)) continue;
      let file = p.inline;
      let filename = p.filename;
      let sha: string | null = null;
      if (p.fileId !== null) {
        const row = await this.deps.files.get(ctx.workspaceId, p.fileId).catch(() => {
          throw badRequest(`${p.where}: file ${p.fileId} not found in this workspace`, { field: p.where });
        });
        if (p.kind === 'image' && !IMAGE_TYPES.has(row.mime_type)) {
          throw badRequest(`${p.where}: file ${p.fileId} is ${row.mime_type}, not an image (PNG, JPEG, GIF or WebP)`, { field: p.where });
        }
        file = { mime: row.mime_type, data: await this.deps.files.storage.read(row.storage_key) };
        filename ??= row.filename;
        sha = row.sha256;
      }
      if (!file) continue; // a URL: the upstream fetches it
      filename ??= 'file';
      if (file.mime === 'application/pdf' && engine === 'text' && p.kind !== 'image') {
        const r = await this.pdfText(file.data, sha ?? createHash('sha256').update(file.data).digest('hex'), p.where);
        parsed.push({ filename, pages: r.pages, cached: r.cached });
        p.replace(p.textPart(`<file name="${filename.replace(/"/g, "'")}">\n${r.text}\n</file>`));
      } else if (p.fileId !== null) p.replace(p.inlinePart(file.mime, file.data, filename));
    }
    const pipeline: PluginPipelineEntry[] =
      parsed.length === 0
        ? []
        : [
            {
              type: 'plugin',
              name: 'file-parser',
              summary: `Extracted the text of ${parsed.length} PDF${parsed.length === 1 ? '' : 's'} (${parsed.reduce((n, f) => n + f.pages, 0)} pages) with the text engine`,
              data: { engine: 'text', files: parsed },
              cost_usd: 0,
            },
          ];
    return { body, pipeline };
  }

  /** A PDF's text, from the cache (by content hash) or extracted now and cached. */
  private async pdfText(data: Buffer, sha256: string, where: string): Promise<{ text: string; pages: number; cached: boolean }> {
    const hit = await this.deps.store.getFileParse(sha256, 'text');
    if (hit) return { text: hit.text, pages: hit.pages, cached: true };
    let out: { totalPages: number; text: string };
    try {
      // unpdf is loaded by the first PDF read as text, not at start-up (a smaller heap to mark).
      const { extractText, getDocumentProxy } = await import('unpdf');
      const doc = await getDocumentProxy(new Uint8Array(data));
      out = await extractText(doc, { mergePages: true });
      await doc.destroy();
    } catch (err) {
      throw badRequest(`${where}: the PDF could not be read (${(err as Error).message})`, { field: where });
    }
    const text = out.text.replace(/\u0000/g, '').trim();
    await this.deps.store.putFileParse({ sha256, engine: 'text', text, pages: out.totalPages, created_at: new Date(this.deps.now()).toISOString() });
    return { text, pages: out.totalPages, cached: false };
  }
}
