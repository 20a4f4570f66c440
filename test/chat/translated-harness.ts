/**
 * The harness of the translated-stream tests (translated-relay.test.ts, translated-responses.test.ts): one stream
 * relayed through the byte-level fast path (IrByteStreamSession) or the IR path (IrStreamSession), read in pieces of
 * given sizes, and what the client got; the client's events parsed; the read sizes every comparison runs at.
 */
import { StringDecoder } from 'node:string_decoder';
import type { AnswerMeta, StreamDecoder, StreamEncoder } from '../../src/core/adapters.js';
import type { UpstreamError } from '../../src/core/provider-errors.js';
import { IrByteStreamSession } from '../../src/services/codec-ir-bytes.js';
import { IrStreamSession } from '../../src/services/codec-ir-stream.js';
import type { StreamSession } from '../../src/services/codec-types.js';

export interface Run {
  out: string;
  failure: UpstreamError | null;
  thrown: unknown;
  produced: number;
  usage: unknown;
  finish: string | null;
  upstreamId: string | null;
  /** Deltas the encoder took raw. */
  raw: number;
}

/** Relays `bytes` read in pieces of the given sizes (cycled) from `decoder` to `encoder`: what the client gets. */
export function relayThrough(decoder: StreamDecoder, encoder: StreamEncoder, meta: AnswerMeta, bytes: Buffer, sizes: number[], fast: boolean): Run {
  let raw = 0;
  const rawDelta = encoder.rawDelta!.bind(encoder);
  encoder.rawDelta = (d) => {
    const s = rawDelta(d);
    if (s !== null) raw++;
    return s;
  };
  const s: StreamSession = fast ? new IrByteStreamSession(decoder, encoder, false) : new IrStreamSession(decoder, encoder, { exclude: false, filters: null, healer: null });
  const text = new StringDecoder('utf8');
  let out = '';
  let thrown: unknown = null;
  try {
    for (let i = 0, k = 0; i < bytes.length; k++) {
      const n = Math.min(sizes[k % sizes.length], bytes.length);
      const piece = bytes.subarray(i, i + n);
      i += n;
      const got = s.push(s.binary ? piece : text.write(piece));
      out += typeof got === 'string' ? got : got.toString('utf8');
      if (s.failure) break;
    }
    if (!s.failure) out += s.end();
    if (!s.failure) out += s.finishOut(meta);
  } catch (err) {
    thrown = err;
  }
  return { out, failure: s.failure, thrown, produced: s.producedTokens, usage: s.usage(), finish: s.finish, upstreamId: s.upstreamId, raw };
}

/** The client's events: their data parsed (with the `event:` name where there is one). */
export const events = (out: string) =>
  out
    .split('\n\n')
    .filter((l) => l !== '')
    .map((l) => {
      const event = /^event: (.*)\n/.exec(l)?.[1];
      const data = l.slice(l.indexOf('data: ') + 6);
      return data === '[DONE]' ? data : event ? { event, data: JSON.parse(data) as unknown } : (JSON.parse(data) as unknown);
    });

/** Read sizes (cycled): whole, byte by byte, and mixed. */
export const SIZES = [[Infinity], [1], [7], [3, 64, 5, 200], [150, 1]];
