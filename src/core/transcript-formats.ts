/**
 * The plain-text answers of `POST /audio/transcriptions` (OpenAI's `response_format` `text`, `srt` and `vtt`), put
 * together from a provider's `verbose_json` answer. The gateway always asks a provider for JSON — the text formats
 * carry no usage, so they could not be billed — and renders them itself, the same way for every provider.
 */

/** The plain-text formats, with their media types (SubRip has no registered one: plain text, as OpenAI answers it). */
export const TEXT_TRANSCRIPT_FORMATS = { text: 'text/plain; charset=utf-8', srt: 'text/plain; charset=utf-8', vtt: 'text/vtt; charset=utf-8' } as const;
export type TextTranscriptFormat = keyof typeof TEXT_TRANSCRIPT_FORMATS;

export const isTextTranscriptFormat = (f: string): f is TextTranscriptFormat => Object.hasOwn(TEXT_TRANSCRIPT_FORMATS, f);

/** One timed piece of a transcript. */
export interface Cue {
  start: number;
  end: number;
  text: string;
}

/**
 * The cues of a verbose answer: its segments (start, end, text; malformed ones skipped), or, when it has none, the whole
 * text as one cue over the audio's duration (0 when unknown).
 */
export function cuesOf(answer: { text?: unknown; segments?: unknown; duration?: unknown }): Cue[] {
  const cues: Cue[] = [];
  if (Array.isArray(answer.segments)) {
    for (const s of answer.segments as Array<Record<string, unknown>>) {
      if (typeof s?.start !== 'number' || typeof s.end !== 'number' || typeof s.text !== 'string') continue;
      const text = s.text.trim();
      if (text) cues.push({ start: Math.max(0, s.start), end: Math.max(s.start, s.end), text });
    }
  }
  if (cues.length === 0 && typeof answer.text === 'string' && answer.text.trim()) {
    const duration = typeof answer.duration === 'number' && answer.duration > 0 ? answer.duration : 0;
    cues.push({ start: 0, end: duration, text: answer.text.trim() });
  }
  return cues;
}

/** `hh:mm:ss<sep>mmm`, rounded to the millisecond. */
function timestamp(seconds: number, sep: ',' | '.'): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(Math.floor(ms / 3_600_000))}:${pad(Math.floor(ms / 60_000) % 60)}:${pad(Math.floor(ms / 1000) % 60)}${sep}${pad(ms % 1000, 3)}`;
}

/** SubRip: numbered cues, `00:00:01,500 --> 00:00:03,000`, a blank line after each. */
export function toSrt(cues: Cue[]): string {
  return cues.map((c, i) => `${i + 1}\n${timestamp(c.start, ',')} --> ${timestamp(c.end, ',')}\n${c.text}\n\n`).join('');
}

/** WebVTT: the `WEBVTT` header, then cues with `00:00:01.500 --> 00:00:03.000`. */
export function toVtt(cues: Cue[]): string {
  return `WEBVTT\n\n${cues.map((c) => `${timestamp(c.start, '.')} --> ${timestamp(c.end, '.')}\n${c.text}\n\n`).join('')}`;
}

/** The body of a plain-text answer in `format`, from the transcript's JSON (`text`, and for subtitles its segments). */
export function renderTranscript(format: TextTranscriptFormat, answer: { text?: unknown; segments?: unknown; duration?: unknown }): string {
  if (format === 'text') return `${typeof answer.text === 'string' ? answer.text : ''}\n`;
  const cues = cuesOf(answer);
  return format === 'srt' ? toSrt(cues) : toVtt(cues);
}
