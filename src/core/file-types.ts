/**
 * The type of an uploaded file, sniffed from its first bytes (never from its name or declared type; docs/files.md):
 * PDF, PNG/JPEG/GIF/WebP images, DOCX/XLSX/PPTX documents, MP3/WAV/FLAC/OGG audio, or UTF-8 text — reported by its
 * structure as application/json, application/x-ndjson, text/csv, text/markdown or text/plain. Pure.
 */

/** How many leading bytes the sniffer looks at. */
export const SNIFF_BYTES = 64 * 1024;

const startsWith = (b: Buffer, sig: number[], at = 0) => b.length >= at + sig.length && sig.every((x, i) => b[at + i] === x);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/**
 * The MIME type of a file from its head (its first SNIFF_BYTES bytes, or all of it when shorter: `whole`), or null
 * when it is none of the accepted types.
 */
export function sniffMime(head: Buffer, whole: boolean): string | null {
  if (startsWith(head, ascii('%PDF-'))) return 'application/pdf';
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WAVE'), 8)) return 'audio/wav';
  if (startsWith(head, ascii('fLaC'))) return 'audio/flac';
  if (startsWith(head, ascii('OggS'))) return 'audio/ogg';
  if (startsWith(head, ascii('ID3')) || (head.length >= 2 && head[0] === 0xff && (head[1] & 0xe6) === 0xe2)) return 'audio/mpeg';
  if (startsWith(head, [0x50, 0x4b, 0x03, 0x04])) return officeType(head);
  return textType(head, whole);
}

/** An Office Open XML document: a ZIP whose entries name the part folder (word/, xl/, ppt/). */
function officeType(head: Buffer): string | null {
  const names = head.toString('latin1');
  if (!names.includes('[Content_Types].xml')) return null;
  if (names.includes('word/')) return 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  if (names.includes('xl/')) return 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
  if (names.includes('ppt/')) return 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
  return null;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** UTF-8 text (no NUL, no control characters but whitespace), classified by its structure; null otherwise. */
function textType(head: Buffer, whole: boolean): string | null {
  let text: string;
  try {
    // A head cut in the middle of a character: the last 3 bytes may be an incomplete sequence.
    text = UTF8.decode(whole ? head : head.subarray(0, cutAtBoundary(head)));
  } catch {
    return null;
  }
  if (text.length === 0 || /[\u0000-\u0008\u000b\u000e-\u001f\u007f]/.test(text)) return null;
  const body = text.replace(/^\uFEFF/, '');
  const trimmed = body.trim();
  if (whole && /^[[{]/.test(trimmed) && isJson(trimmed)) return 'application/json';
  const lines = body.split(/\r?\n/).filter((l) => l.trim() !== '');
  const complete = whole ? lines : lines.slice(0, -1); // the last line of a head may be cut
  if (complete.length >= 2 && complete.every((l) => /^\s*\{/.test(l) && isJson(l))) return 'application/x-ndjson';
  if (isCsv(complete)) return 'text/csv';
  if (/^#{1,6} \S|^\s*```|^\s*[-*] \S.*\n\s*[-*] \S|\[[^\]\n]+\]\([^)\s]+\)|^\s*\|.+\|\s*\n\s*\|\s*:?-{3,}/m.test(body)) return 'text/markdown';
  return 'text/plain';
}

function cutAtBoundary(b: Buffer): number {
  let end = b.length;
  // Back up over continuation bytes to the start of the last character, and drop it if incomplete.
  let i = end - 1;
  while (i >= 0 && i >= end - 4 && (b[i] & 0xc0) === 0x80) i--;
  if (i >= 0 && b[i] >= 0xc0) {
    const need = b[i] >= 0xf0 ? 4 : b[i] >= 0xe0 ? 3 : 2;
    if (end - i < need) end = i;
  }
  return end;
}

function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return true;
  } catch {
    return false;
  }
}

/** At least two lines, each with the same number (≥ 1) of commas outside quotes. */
function isCsv(lines: string[]): boolean {
  if (lines.length < 2) return false;
  const commas = (l: string) => {
    let n = 0;
    let quoted = false;
    for (const c of l) {
      if (c === '"') quoted = !quoted;
      else if (c === ',' && !quoted) n++;
    }
    return n;
  };
  const n = commas(lines[0]);
  return n >= 1 && lines.slice(1, 50).every((l) => commas(l) === n);
}

/** The file extension that goes with a sniffed type (for a name when the upload had none). */
export const MIME_EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'audio/wav': 'wav',
  'audio/flac': 'flac',
  'audio/ogg': 'ogg',
  'audio/mpeg': 'mp3',
  'application/json': 'json',
  'application/x-ndjson': 'jsonl',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'text/plain': 'txt',
};
