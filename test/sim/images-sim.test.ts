/**
 * The simulator's image APIs: OpenAI `/v1/images/generations` and `/v1/images/edits` and Gemini image output answer in
 * the real wire shapes with decodable PNG files; bad requests get the provider's error envelope; the fault knobs apply.
 */
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSimulator, type Simulator } from '../../src/sim/server.js';
import { simPng, SIM_IMAGE_TOKENS, IMAGE_OUTPUT_TOKENS } from '../../src/sim/images.js';

/** Reads a PNG: checks the signature and every chunk's CRC, returns the size and the inflated pixel rows. */
function readPng(buf: Buffer): { width: number; height: number; raw: Buffer } {
  expect(buf.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let off = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  const table = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = table[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  for (;;) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    expect(buf.readUInt32BE(off + 8 + len)).toBe(crc(buf.subarray(off + 4, off + 8 + len)));
    if (type === 'IHDR') [width, height] = [data.readUInt32BE(0), data.readUInt32BE(4)];
    if (type === 'IDAT') idat.push(data);
    off += 12 + len;
    if (type === 'IEND') break;
  }
  return { width, height, raw: inflateSync(Buffer.concat(idat)) };
}

let sim: Simulator;
beforeAll(async () => {
  sim = await createSimulator();
});
afterAll(async () => sim.close());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${sim.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }).then(async (r) => ({ status: r.status, text: await r.text() }));

describe('simulated image APIs', () => {
  it('simPng is a valid 8×8 RGB PNG', () => {
    const png = readPng(simPng('x'));
    expect(png).toMatchObject({ width: 8, height: 8 });
    expect(png.raw.length).toBe(8 * (1 + 8 * 3));
  });

  it('OpenAI generations and edits: n images, usage for gpt-image, none for DALL·E; errors in the envelope', async () => {
    const r = await post('/v1/images/generations', { model: 'gpt-image-1', prompt: 'cat', n: 2, quality: 'medium' });
    const body = JSON.parse(r.text);
    expect(body.data).toHaveLength(2);
    readPng(Buffer.from(body.data[1].b64_json, 'base64'));
    expect(body.usage.output_tokens).toBe(2 * SIM_IMAGE_TOKENS.medium);
    const dalle = JSON.parse((await post('/v1/images/generations', { model: 'dall-e-3', prompt: 'cat', response_format: 'b64_json' })).text);
    expect(dalle.usage).toBeUndefined();
    expect((await post('/v1/images/generations', { model: 'dall-e-3', prompt: 'cat', n: 2 })).status).toBe(400);
    expect((await post('/v1/images/edits', { model: 'gpt-image-1', prompt: 'cat' })).status).toBe(400);
    const missing = await post('/v1/images/generations', { model: 'gpt-image-1' });
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text).error).toMatchObject({ param: 'prompt', type: 'invalid_request_error' });
    expect((await post('/v1/images/generations', { model: 'gpt-image-1', prompt: 'cat' }, { 'x-sim-error-status': '503' })).status).toBe(503);
  });

  it('Gemini image output: inlineData PNG and usage; SSE streamed; text-only without the IMAGE modality', async () => {
    const path = '/v1beta/models/gemini-2.5-flash-image:generateContent';
    const r = JSON.parse((await post(path, { contents: [{ role: 'user', parts: [{ text: 'cat' }] }], generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } })).text);
    const parts = r.candidates[0].content.parts;
    expect(parts[1].inlineData.mimeType).toBe('image/png');
    readPng(Buffer.from(parts[1].inlineData.data, 'base64'));
    expect(r.usageMetadata.candidatesTokensDetails).toContainEqual({ modality: 'IMAGE', tokenCount: IMAGE_OUTPUT_TOKENS });
    const sse = await post('/v1beta/models/gemini-2.5-flash-image:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'cat' }] }], generationConfig: { responseModalities: ['TEXT', 'IMAGE'] } });
    expect(sse.text.split('\n\n').filter((e) => e.startsWith('data:'))).toHaveLength(3);
    const text = JSON.parse((await post(path, { contents: [{ role: 'user', parts: [{ text: 'cat' }] }] })).text);
    expect(text.candidates[0].content.parts.every((p: { inlineData?: unknown }) => p.inlineData === undefined)).toBe(true);
  });
});
