/**
 * Document inputs (PDFs, text files) in each protocol's own shape, checked as the providers check them: a simulated
 * upstream refuses a malformed document with its protocol's 400, so a test learns when the gateway sends one in the
 * wrong shape. Inline bytes must be base64, and a PDF must start with `%PDF-`.
 *
 * - OpenAI chat: `{type: "file", file: {file_data: "data:<type>;base64,…", filename} | {file_id}}`
 *   (https://platform.openai.com/docs/guides/pdf-files);
 * - OpenAI Responses: `{type: "input_file", file_data | file_id | file_url, filename}` (same guide);
 * - Anthropic: `{type: "document", source: {type: "base64", media_type: "application/pdf", data} | {type: "text",
 *   media_type: "text/plain", data} | {type: "url", url} | {type: "file", file_id}}` — a file source needs the
 *   `files-api-2025-04-14` beta (https://docs.anthropic.com/en/docs/build-with-claude/pdf-support);
 * - Gemini: `{inlineData: {mimeType: "application/pdf", data}}` (https://ai.google.dev/gemini-api/docs/document-processing);
 * - Bedrock Converse: `{document: {format: "pdf", name, source: {bytes}}}`, a name of letters, digits, single spaces,
 *   hyphens, parentheses and square brackets (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_DocumentBlock.html).
 *
 * Each checker returns the error message, or null when the document is well formed (or the part is no document).
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Inline bytes: base64, and a PDF's magic when the type says PDF. */
export function checkBytes(data: unknown, mediaType: string, where: string): string | null {
  if (typeof data !== 'string' || data === '' || data.length % 4 !== 0 || !BASE64.test(data)) return `${where}: the data is not valid base64`;
  if (mediaType === 'application/pdf' && !Buffer.from(data.slice(0, 12), 'base64').toString('latin1').startsWith('%PDF-')) return `${where}: the PDF specified was not valid`;
  return null;
}

function dataUrl(v: unknown, where: string): string | null {
  if (typeof v !== 'string') return `${where} must be a string`;
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(v);
  if (!m) return `${where}: expected a base64-encoded data URL`;
  return checkBytes(m[2], m[1].toLowerCase(), where);
}

/** An OpenAI chat content part. */
export function openaiFilePart(p: Obj, where: string): string | null {
  if (p.type !== 'file') return null;
  const f = p.file;
  if (!isObj(f)) return `Missing required parameter: '${where}.file'.`;
  if (f.file_data !== undefined) return dataUrl(f.file_data, `${where}.file.file_data`);
  if (typeof f.file_id === 'string' && f.file_id !== '') return null;
  return `Invalid '${where}.file': one of file_data or file_id is required.`;
}

/** An OpenAI Responses input content part. */
export function responsesFilePart(p: Obj, where: string): string | null {
  if (p.type !== 'input_file') return null;
  if (p.file_data !== undefined) return dataUrl(p.file_data, `${where}.file_data`);
  if (typeof p.file_id === 'string' && p.file_id !== '') return null;
  if (typeof p.file_url === 'string' && /^https?:\/\//.test(p.file_url)) return null;
  return `Invalid '${where}': one of file_data, file_id or file_url is required.`;
}

/** An Anthropic content block; `betas` is the request's `anthropic-beta` header. */
export function anthropicDocument(b: Obj, where: string, betas: string): string | null {
  if (b.type !== 'document') return null;
  const s = b.source;
  if (!isObj(s)) return `${where}.source: Field required`;
  switch (s.type) {
    case 'base64':
      if (s.media_type !== 'application/pdf') return `${where}.source.base64.media_type: Input should be 'application/pdf'`;
      return checkBytes(s.data, 'application/pdf', `${where}.source.base64.data`);
    case 'text':
      if (s.media_type !== 'text/plain') return `${where}.source.text.media_type: Input should be 'text/plain'`;
      return typeof s.data === 'string' ? null : `${where}.source.text.data: Input should be a valid string`;
    case 'url':
      return typeof s.url === 'string' && /^https?:\/\//.test(s.url) ? null : `${where}.source.url.url: Input should be a valid URL`;
    case 'file':
      if (!betas.split(',').map((x) => x.trim()).includes('files-api-2025-04-14')) return `${where}.source: file sources need the files-api-2025-04-14 beta`;
      return typeof s.file_id === 'string' && s.file_id !== '' ? null : `${where}.source.file.file_id: Field required`;
    case 'content':
      return Array.isArray(s.content) ? null : `${where}.source.content.content: Input should be a valid list`;
    default:
      return `${where}.source: Input tag '${String(s.type)}' found using 'type' does not match any of the expected tags: 'base64', 'content', 'file', 'text', 'url'`;
  }
}

/** A Gemini part (`inlineData` of a document type). */
export function geminiDocument(p: Obj, where: string): string | null {
  const d = p.inlineData;
  if (!isObj(d) || typeof d.mimeType !== 'string') return null;
  if (d.mimeType !== 'application/pdf' && !d.mimeType.startsWith('text/')) return null;
  return checkBytes(d.data, d.mimeType, `${where}.inline_data`);
}

const BEDROCK_FORMATS = new Set(['pdf', 'csv', 'doc', 'docx', 'xls', 'xlsx', 'html', 'txt', 'md']);

/** A Converse content block. */
export function bedrockDocument(c: Obj): string | null {
  const d = c.document;
  if (d === undefined) return null;
  if (!isObj(d)) return 'Malformed input request: #/document: expected an object';
  if (typeof d.format !== 'string' || !BEDROCK_FORMATS.has(d.format)) return `Malformed input request: #/document/format: ${String(d.format)} is not a valid enum value`;
  if (typeof d.name !== 'string' || d.name === '' || !/^[A-Za-z0-9\-()[\]]+( [A-Za-z0-9\-()[\]]+)*$/.test(d.name)) {
    return 'The document file name can only contain alphanumeric characters, whitespace characters, hyphens, parentheses, and square brackets. The name can\'t contain more than one consecutive whitespace character.';
  }
  const src = d.source;
  if (!isObj(src)) return 'Malformed input request: #/document/source: expected an object';
  return checkBytes(src.bytes, d.format === 'pdf' ? 'application/pdf' : 'text/plain', 'The document bytes');
}

/** The first malformed document of a list of content lists (`[parts, where]`), or null. */
export function firstDocumentError(lists: Array<[unknown, string]>, check: (p: Obj, where: string) => string | null): string | null {
  for (const [list, at] of lists) {
    if (!Array.isArray(list)) continue;
    for (let j = 0; j < list.length; j++) {
      const p: unknown = list[j];
      const err = isObj(p) ? check(p, `${at}[${j}]`) : null;
      if (err) return err;
    }
  }
  return null;
}
