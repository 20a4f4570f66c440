/**
 * The `malformed` knob's answers: what a broken, hostile or misconfigured upstream sends with a 200.
 *
 * | kind      | a JSON answer                                  | a stream (the first content event's data)        |
 * |-----------|------------------------------------------------|--------------------------------------------------|
 * | `json`    | its first half (cut mid-JSON)                  | its first half                                   |
 * | `empty`   | no body at all                                 | no events at all                                 |
 * | `types`   | every value of the wrong JSON type (below)     | the same, on that event                          |
 * | `garbage` | an HTML error page                             | HTML instead of JSON                             |
 * | `huge`    | a `padding` field of `hugeBytes` (4 MiB) added | the same, in one event (one line)                |
 *
 * Wrong types: strings become numbers (their length), numbers and booleans become strings, recursively; the
 * discriminators `type`, `object`, `role` and `event` keep their values, so a parser still recognises the event or
 * part and trips on a field instead.
 */
export type Malformed = 'json' | 'empty' | 'types' | 'garbage' | 'huge';
export const MALFORMED_KINDS: readonly Malformed[] = ['json', 'empty', 'types', 'garbage', 'huge'];

export const DEFAULT_HUGE_BYTES = 4 * 1024 * 1024;
const GARBAGE = '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>';
const KEEP = new Set(['type', 'object', 'role', 'event']);

/** `v` with every scalar of the other JSON type (see above). */
export function flipTypes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(flipTypes);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = KEEP.has(k) ? x : flipTypes(x);
    return out;
  }
  if (typeof v === 'string') return v.length;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return v;
}

/** A JSON text (an answer, or an event's data) broken as `kind` says; text that is not JSON is replaced whole. */
export function corrupt(text: string, kind: Malformed, hugeBytes = DEFAULT_HUGE_BYTES): string {
  switch (kind) {
    case 'empty':
      return '';
    case 'json':
      return text.slice(0, Math.ceil(text.length / 2));
    case 'garbage':
      return GARBAGE;
    case 'huge': {
      const pad = `"padding":"${'x'.repeat(hugeBytes)}"`;
      return text.startsWith('{') ? `{${pad}${text.length > 2 ? ',' : ''}${text.slice(1)}` : `{${pad}}`;
    }
    case 'types':
      try {
        return JSON.stringify(flipTypes(JSON.parse(text)));
      } catch {
        return '42';
      }
  }
}
