/**
 * The translated stream's fast path (issue 18): an IR stream session (codec-ir-stream.ts) whose common events skip
 * the IR. Each upstream read is cut at its events (providers/sse-reads.ts, as the same-protocol relay cuts its reads)
 * and scanned as Latin-1 text of its bytes (one character per byte, a copy without decoding) beside the bytes
 * themselves (core/byte-shape.ts `ReadBytes`: the decoders compare a stream's common event with the last one in
 * them). Once content has started, an event the upstream decoder recognizes in its bytes as a plain text delta or a
 * started tool call's next arguments (`StreamDecoder.rawDelta`: a
 * strict pattern, valid JSON only) goes out as the client API's chunk from a template with the delta's JSON string
 * as it came (`StreamEncoder.rawDelta`): not decoded, parsed, checked against the schema, turned into an IR event or
 * re-serialized. Every other event — the first ones, finish, usage, errors, reasoning, tool starts, comments, any
 * other form — is decoded and fed to the IR session, in order, one at a time (so that the decoder's state is current
 * when the next event is looked at). The output of a read is built as Latin-1 text and encoded once, as one Buffer.
 *
 * A stream whose line ends are not LF (a CR anywhere) goes wholly through the IR session from then on, and so does a
 * read whose bytes are not UTF-8 (decoded with replacement characters, as the text path does).
 */
import { isUtf8 } from 'node:buffer';
import { StringDecoder } from 'node:string_decoder';
import type { AnswerMeta, RawDelta, StreamDecoder, StreamEncoder } from '../core/adapters.js';
import { jsonStringLength, latin1, utf8Of } from '../core/json-scan.js';
import type { UpstreamError } from '../core/provider-errors.js';
import { SseReads } from '../providers/sse-reads.js';
import { eventTooLarge } from '../providers/sse.js';
import { readBytes, type ReadBytes } from '../core/byte-shape.js';
import type { StreamSession } from './codec-types.js';
import { deltaTokens } from './chat-relay.js';
import { IrStreamSession } from './codec-ir-stream.js';

/** Whether a decoder and an encoder both have the fast path (and nothing needs to see every event's text). */
export function hasRawPath(decoder: StreamDecoder, encoder: StreamEncoder): boolean {
  return decoder.rawDelta !== undefined && encoder.rawDelta !== undefined && decoder.pushBytes === undefined;
}

/**
 * The output of a read is encoded every this many characters: V8 builds and copies a long string made of many small
 * ones far more slowly past some tens of kilobytes (about 10 ns a byte at 100 KB on this machine against under 1).
 */
const OUT_PIECE = 8 * 1024;
/** A read at least this long is not joined to the bytes carried from the last one (see push). */
const SPLIT_FROM = 8 * 1024;

export class IrByteStreamSession implements StreamSession {
  readonly binary = true;
  private readonly inner: IrStreamSession;
  /** Output tokens of the deltas relayed here (the inner session counts its own). */
  private fastTokens = 0;
  private ownFailure: UpstreamError | null = null;
  /**
   * The reads cut at their events (an event cut by a read's end is carried to the next). A large read is scanned as
   * it is, not joined to the carried bytes (the carried event is completed apart, up to the read's first blank line);
   * a small one is joined (a small copy, cheaper than a second pass).
   */
  private readonly reads = new SseReads(SPLIT_FROM);
  /** A CR was seen: every read is decoded and fed to the IR session. */
  private text: StringDecoder | null = null;

  constructor(
    private readonly decoder: StreamDecoder,
    private readonly encoder: StreamEncoder,
    exclude: boolean,
  ) {
    this.inner = new IrStreamSession(decoder, encoder, { exclude, filters: null, healer: null });
  }

  get contentStarted(): boolean {
    return this.inner.contentStarted;
  }
  get producedTokens(): number {
    return this.fastTokens + this.inner.producedTokens;
  }
  get failure(): UpstreamError | null {
    return this.ownFailure ?? this.inner.failure;
  }
  get finish(): string | null {
    return this.inner.finish;
  }
  get native(): string | null {
    return this.inner.native;
  }
  get upstreamId(): string | null {
    return this.inner.upstreamId;
  }

  push(input: string | Uint8Array): string | Buffer {
    const chunk = typeof input === 'string' ? Buffer.from(input) : Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    if (this.text === null && chunk.indexOf(0x0d) !== -1) {
      this.text = new StringDecoder('utf8');
      const carried = this.reads.take();
      return this.inner.push((carried === null ? '' : this.text.write(carried)) + this.text.write(chunk));
    }
    if (this.text !== null) return this.inner.push(this.text.write(chunk));
    const reads = this.reads;
    reads.cut(chunk);
    if (reads.tooLarge) throw eventTooLarge();
    const head = reads.head;
    const body = reads.body;
    if (head === null && body.length === 0) return '';
    // Bytes that are not UTF-8 are decoded (with replacement characters) rather than relayed. The carried event and
    // the rest are cut at a blank line, so each is checked (and decoded) alone as the whole would be.
    if ((head !== null && !isUtf8(head)) || !isUtf8(body)) return this.inner.push((head === null ? '' : head.toString('utf8')) + body.toString('utf8'));
    let out = head === null ? '' : this.events(readBytes(head), '');
    if (body.length > 0 && !this.failure) out = this.events(readBytes(body), out);
    const parts = this.parts;
    if (parts.length === 0) return out === '' ? '' : Buffer.from(out, 'latin1');
    if (out !== '') parts.push(Buffer.from(out, 'latin1'));
    this.parts = [];
    return parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  /** Output of the current read already encoded (see OUT_PIECE). */
  private parts: Buffer[] = [];

  /**
   * The complete events of `read` (up to a blank line's end): the client's bytes, as Latin-1 text, after `out` (what
   * the read gave before).
   */
  private events(read: ReadBytes, out: string): string {
    const { decoder, encoder, inner } = this;
    const buf = read.text;
    const done = buf.length;
    try {
      for (let pos = 0; pos < done; ) {
        let s = pos;
        let nn = -1;
        let d: RawDelta | null = null;
        // Every event before this one was fed: the decoder's state is current (rawDelta depends on it). A delta like
        // the stream's last one is found without searching for its blank line first (rawDeltaFrom).
        if (decoder.rawDeltaFrom !== undefined && inner.contentStarted) {
          while (s < done && buf.charCodeAt(s) === 0x0a) s++; // blank lines beyond the first
          d = decoder.rawDeltaFrom(read, s, done);
          if (d !== null) nn = decoder.rawEnd!;
        }
        if (d === null) {
          nn = buf.indexOf('\n\n', pos);
          // `done` may end inside an odd run of line feeds (`…}\n\n\n`): the last one is a blank line, nothing more.
          if (nn === -1) break;
          s = pos;
          while (s < nn && buf.charCodeAt(s) === 0x0a) s++; // blank lines beyond the first
          if (s === nn) {
            pos = nn + 2;
            continue;
          }
          if (inner.contentStarted) d = decoder.rawDelta!(read, s, nn);
        }
        pos = nn + 2;
        const piece = d === null ? null : encoder.rawDelta!(d);
        if (piece !== null) {
          out = this.taken(d!, piece, out);
          continue;
        }
        out += latin1(inner.push(utf8Of(buf, s, pos)));
        if (inner.failure) break;
      }
    } catch (err) {
      if (out === '' && this.parts.length === 0) throw err;
      this.ownFailure = err as UpstreamError;
    }
    return out;
  }

  /** A delta written raw (`piece`, its chunk): the decoder told, its tokens counted; `out` with the piece. */
  private taken(d: RawDelta, piece: string, out: string): string {
    this.decoder.rawTaken?.(d);
    this.fastTokens += deltaTokens(jsonStringLength(d.buf, d.from, d.to - 1));
    out += piece;
    if (out.length > OUT_PIECE) {
      this.parts.push(Buffer.from(out, 'latin1'));
      out = '';
    }
    return out;
  }

  end(): string {
    const carried = this.reads.take();
    const rest = carried === null ? '' : this.inner.push(carried.toString('utf8'));
    if (this.inner.failure) return rest;
    return rest + this.inner.end();
  }

  finishOut(m: AnswerMeta): string {
    return this.inner.finishOut(m);
  }

  errorOut(status: number, message: string, errorType: string, m: AnswerMeta): string {
    return this.inner.errorOut(status, message, errorType, m);
  }

  usage() {
    return this.inner.usage();
  }
}
