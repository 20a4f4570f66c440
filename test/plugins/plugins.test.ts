/**
 * The request plugins end to end (docs/plugins.md), each on and off, plain and streamed, through the simulator:
 * file-parser (a PDF uploaded to /files and asked about through a model whose upstream cannot read PDFs; native
 * for one that can; the parse cached by content hash), context-compression middle-out (a model with a small
 * context), response-healing (a broken JSON reply repaired and checked against the schema), moderation (the
 * simulator's moderation endpoint) and web (the web search server tool).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSimulator, type Simulator } from '../../src/sim/index.js';
import { simCatalog } from '../chat-helpers.js';
import { parseSse, streamedText } from '../chat/util.js';
import { createInferenceKey, startGateway, type TestGateway } from '../helpers.js';
import { makePdf } from './pdf.js';

const PDF = makePdf('PINEAPPLE-42 is the secret code of this document.');
let sim: Simulator;
let t: TestGateway;
let key: string;

beforeAll(async () => {
  sim = await createSimulator();
  const dir = mkdtempSync(join(tmpdir(), 'gw-plugins-'));
  const catalog = simCatalog(sim.url, {
    models: [
      { id: 'test/reader', name: 'Reads PDFs', context_length: 32000, input_modalities: ['text', 'file'] },
      { id: 'test/tiny', name: 'Small context', context_length: 400 },
      { id: 'test/gemini-reader', name: 'Gemini that reads PDFs', context_length: 32000, input_modalities: ['text', 'file'] },
      { id: 'test/claude-reader', name: 'Claude that reads PDFs', context_length: 32000, input_modalities: ['text', 'file'] },
    ],
    endpoints: [
      { model: 'test/gemini-reader', provider: 'sim-google', upstream_model: 'gemini-reader', pricing: { prompt: '0.000001', completion: '0.000001' }, supported_parameters: ['max_tokens'] },
      { model: 'test/claude-reader', provider: 'sim-anthropic', upstream_model: 'claude-reader', pricing: { prompt: '0.000001', completion: '0.000001' }, supported_parameters: ['max_tokens'] },
      { model: 'test/reader', provider: 'sim-b', upstream_model: 'reader-b', pricing: { prompt: '0.000001', completion: '0.000001' }, supported_parameters: ['max_tokens', 'response_format'] },
      { model: 'test/tiny', provider: 'sim-c', upstream_model: 'tiny-c', pricing: { prompt: '0.000001', completion: '0.000001' }, supported_parameters: ['max_tokens', 'response_format'] },
    ],
  });
  writeFileSync(join(dir, 'gateway.yaml'), stringify(catalog));
  t = await startGateway('sqlite', {
    env: {
      GATEWAY_CONFIG: join(dir, 'gateway.yaml'),
      GATEWAY_DEFAULT_CATALOG: 'false',
      GATEWAY_FILES_DIR: join(dir, 'files'),
      GATEWAY_MODERATION_URL: `${sim.url}/sim-mod/v1/moderations`,
      GATEWAY_WEB_SEARCH_URL: `${sim.url}/sim-search`,
    },
  });
  key = (await createInferenceKey(t)).key;
});
afterAll(async () => {
  await t?.close();
  await sim?.close();
});
beforeEach(() => sim.resetKnobs());

const META = { 'X-Gateway-Metadata': 'enabled' };
const post = (path: string, body: Record<string, unknown>) => t.call('POST', path, { key, body, headers: META });
async function stream(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${t.api}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...META }, body: JSON.stringify({ ...body, stream: true }) });
  const text = await res.text();
  return { status: res.status, text, ...(res.headers.get('content-type')?.startsWith('text/event-stream') ? parseSse(text) : { chunks: [] as any[] }) };
}
const lastUpstream = (provider: string) => sim.requests.filter((r) => r.provider === provider).at(-1)?.body as any;
const pipelineOf = (body: any) => (body?.gateway_metadata?.pipeline ?? []) as any[];

async function uploadPdf(): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([PDF]), 'secret.pdf');
  const res = await fetch(`${t.api}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  expect(res.status).toBe(200);
  return ((await res.json()) as any).id;
}

describe('file-parser', () => {
  let fileId: string;
  beforeAll(async () => {
    fileId = await uploadPdf();
  });
  const ask = (model: string, extra: Record<string, unknown> = {}) => ({
    model,
    messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: fileId } }, { type: 'text', text: 'What is the secret code?' }] }],
    ...extra,
  });

  it('a PDF question answered by a model whose upstream cannot read PDFs (text engine, parse cached by content hash)', async () => {
    const r = await post('/chat/completions', ask('test/alpha'));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.choices[0].message.content).toContain('PINEAPPLE-42');
    const sent = lastUpstream('sim-a').messages[0].content;
    expect(sent.some((p: any) => p.type === 'file')).toBe(false);
    expect(sent[0]).toEqual({ type: 'text', text: '<file name="secret.pdf">\nPINEAPPLE-42 is the secret code of this document.\n</file>' });
    expect(pipelineOf(r.body)).toEqual([expect.objectContaining({ type: 'plugin', name: 'file-parser', cost_usd: 0, data: { engine: 'text', files: [{ filename: 'secret.pdf', pages: 1, cached: false }] } })]);
    const again = await post('/chat/completions', ask('test/alpha'));
    expect(pipelineOf(again.body)[0].data.files[0].cached).toBe(true);
  });

  it('streamed: the same answer', async () => {
    const r = await stream('/chat/completions', ask('test/alpha'));
    expect(r.status).toBe(200);
    expect(streamedText(r.chunks)).toContain('PINEAPPLE-42');
    expect(r.chunks.at(-1).gateway_metadata.pipeline[0].name).toBe('file-parser');
  });

  it('native for a model that reads files: the PDF goes inline; engine text forces extraction; enabled:false passes it as sent', async () => {
    const native = await post('/chat/completions', ask('test/reader'));
    expect(native.status).toBe(200);
    const part = lastUpstream('sim-b').messages[0].content[0];
    expect(part).toEqual({ type: 'file', file: { filename: 'secret.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` } });
    expect(pipelineOf(native.body)).toEqual([]);
    await post('/chat/completions', ask('test/reader', { plugins: [{ id: 'file-parser', pdf: { engine: 'text' } }] }));
    expect(lastUpstream('sim-b').messages[0].content[0].type).toBe('text');
    const inline = { model: 'test/alpha', plugins: [{ id: 'file-parser', enabled: false }], messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'x.pdf', file_data: `data:application/pdf;base64,${PDF.toString('base64')}` } }, { type: 'text', text: 'hi' }] }] };
    await post('/chat/completions', inline);
    expect(lastUpstream('sim-a').messages[0].content[0].type).toBe('file');
    // Inline PDFs (not uploaded) are parsed too when the plugin is on.
    await post('/chat/completions', { ...inline, plugins: undefined });
    expect(lastUpstream('sim-a').messages[0].content[0].text).toContain('PINEAPPLE-42');
  });

  it('native across protocols: a chat PDF reaches a Gemini model that reads files as inlineData, an Anthropic one as a document', async () => {
    const b64 = PDF.toString('base64');
    const g = await post('/chat/completions', ask('test/gemini-reader'));
    expect(g.status, JSON.stringify(g.body)).toBe(200);
    expect(lastUpstream('sim-google').contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'application/pdf', data: b64 } });
    expect(pipelineOf(g.body)).toEqual([]);
    const gs = await stream('/chat/completions', ask('test/gemini-reader'));
    expect(gs.status).toBe(200);
    expect(lastUpstream('sim-google').contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'application/pdf', data: b64 } });
    const c = await post('/chat/completions', ask('test/claude-reader'));
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(lastUpstream('sim-anthropic').messages[0].content[0]).toEqual({ type: 'document', title: 'secret.pdf', source: { type: 'base64', media_type: 'application/pdf', data: b64 } });
    // Responses input_file by id to Gemini; the text engine still wins when asked for.
    const r = await post('/responses', { model: 'test/gemini-reader', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }, { type: 'input_text', text: 'code?' }] }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(lastUpstream('sim-google').contents[0].parts[0]).toEqual({ inlineData: { mimeType: 'application/pdf', data: b64 } });
    await post('/chat/completions', ask('test/gemini-reader', { plugins: [{ id: 'file-parser', pdf: { engine: 'text' } }] }));
    expect(lastUpstream('sim-google').contents[0].parts[0].text).toContain('PINEAPPLE-42');
    // A list mixing a reader and a model that cannot read PDFs: text for all, as before.
    await post('/chat/completions', ask('test/gemini-reader', { models: ['test/gemini-reader', 'test/alpha'] }));
    expect(lastUpstream('sim-google').contents[0].parts[0].text).toContain('PINEAPPLE-42');
  });

  it("Gemini's API: an inline PDF is its text for a model that cannot read PDFs, a chat file part for one that can", async () => {
    const b64 = PDF.toString('base64');
    const gem = async (model: string) => {
      const res = await fetch(`${t.url}/api/v1beta/models/${model}:generateContent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'application/pdf', data: b64 } }, { text: 'code?' }] }] }),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const text = await gem('test/alpha');
    expect(text.status, JSON.stringify(text.body)).toBe(200);
    expect(lastUpstream('sim-a').messages[0].content[0]).toEqual({ type: 'text', text: '<file name="file">\nPINEAPPLE-42 is the secret code of this document.\n</file>' });
    const native = await gem('test/reader');
    expect(native.status, JSON.stringify(native.body)).toBe(200);
    expect(lastUpstream('sim-b').messages[0].content[0]).toEqual({ type: 'file', file: { file_data: `data:application/pdf;base64,${b64}` } });
  });

  it('messages and responses APIs: document / input_file by id', async () => {
    const m = await post('/messages', { model: 'test/alpha', max_tokens: 50, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: fileId } }, { type: 'text', text: 'code?' }] }] });
    expect(m.status, JSON.stringify(m.body)).toBe(200);
    expect(JSON.stringify(lastUpstream('sim-a').messages)).toContain('PINEAPPLE-42');
    const r = await post('/responses', { model: 'test/alpha', input: [{ role: 'user', content: [{ type: 'input_file', file_id: fileId }, { type: 'input_text', text: 'code?' }] }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(lastUpstream('sim-a').messages)).toContain('PINEAPPLE-42');
  });

  it('images by file id: chat image_url (url or file_id), responses input_image, messages image → inline; Gemini upstreams get inlineData', async () => {
    const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(24, 7)]);
    const form = new FormData();
    form.append('file', new Blob([PNG]), 'pic.png');
    const up = await fetch(`${t.api}/files`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    const png = ((await up.json()) as any).id as string;
    const b64 = PNG.toString('base64');
    const c = await post('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: png, detail: 'low' } }, { type: 'text', text: 'what?' }] }] });
    expect(c.status, JSON.stringify(c.body)).toBe(200);
    expect(lastUpstream('sim-a').messages[0].content[0]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${b64}`, detail: 'low' } });
    // The same through a Gemini upstream: inline data (Gemini's fileData would mean its own Files API).
    const g = await post('/chat/completions', { model: 'test/gemini', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { file_id: png } }, { type: 'text', text: 'what?' }] }] });
    expect(g.status, JSON.stringify(g.body)).toBe(200);
    expect(lastUpstream('sim-google').contents[0].parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: b64 } });
    const r = await post('/responses', { model: 'test/alpha', input: [{ role: 'user', content: [{ type: 'input_image', file_id: png }, { type: 'input_text', text: 'what?' }] }] });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(lastUpstream('sim-a').messages[0].content[0].image_url.url).toBe(`data:image/png;base64,${b64}`);
    const m = await post('/messages', { model: 'test/claude', max_tokens: 20, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: png } }, { type: 'text', text: 'what?' }] }] });
    expect(m.status, JSON.stringify(m.body)).toBe(200);
    expect(lastUpstream('sim-anthropic').messages[0].content[0]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: b64 } });
    // Gemini's own API: a stored file named in fileData.fileUri goes inline — an image as inlineData, a PDF as its text
    // for a model that does not read files.
    const gem = async (parts: unknown[]) => {
      const res = await fetch(`${t.url}/api/v1beta/models/test/gemini:generateContent`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ contents: [{ role: 'user', parts }] }) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const gi = await gem([{ fileData: { fileUri: png, mimeType: 'image/png' } }, { text: 'what?' }]);
    expect(gi.status, JSON.stringify(gi.body)).toBe(200);
    expect(lastUpstream('sim-google').contents[0].parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: b64 } });
    const gp = await gem([{ fileData: { fileUri: fileId } }, { text: 'code?' }]);
    expect(gp.status, JSON.stringify(gp.body)).toBe(200);
    expect(JSON.stringify(lastUpstream('sim-google').contents)).toContain('PINEAPPLE-42');
  });

  it('an image part naming a PDF, or an unknown image id, is a 400 naming the part', async () => {
    const r = await post('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: fileId } }] }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^messages\[0\]\.content\[1\]: file gw_file_\w+ is application\/pdf, not an image/);
    const u = await post('/responses', { model: 'test/alpha', input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'gw_file_000000000000000000000000' }] }] });
    expect(u.status).toBe(400);
    expect(u.body.error.message).toMatch(/^input\[0\]\.content\[0\]: file gw_file_0+ not found/);
  });

  it('an unknown file id, a bad engine and an unknown plugin are 400s naming the field', async () => {
    const r = await post('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'gw_file_000000000000000000000000' } }] }] });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toMatch(/^messages\[0\]\.content\[0\]: file gw_file_0+ not found/);
    const e = await post('/chat/completions', ask('test/alpha', { plugins: [{ id: 'file-parser', pdf: { engine: 'magic' } }] }));
    expect(e.body.error.message).toMatch(/^plugins\[0\]\.pdf\.engine/);
    const u = await post('/chat/completions', ask('test/alpha', { plugins: [{ id: 'fusion' }] }));
    expect(u.status).toBe(400);
    expect(u.body.error.message).toMatch(/^plugins\[0\]\.id: "fusion" is not a plugin/);
  });
});

describe('context-compression middle-out', () => {
  const long = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i}: ${'lorem ipsum dolor sit amet '.repeat(6)}` }));
  const body = (plugins?: unknown[]) => ({ model: 'test/tiny', max_tokens: 20, messages: [{ role: 'system', content: 'be brief' }, ...long(21)], ...(plugins ? { plugins } : {}) });

  it('off: the prompt does not fit the small context (refused); on: middle messages removed to fit', async () => {
    const off = await post('/chat/completions', body());
    expect(off.status).not.toBe(200);
    const on = await post('/chat/completions', body([{ id: 'context-compression', engine: 'middle-out' }]));
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    const sent = lastUpstream('sim-c').messages as any[];
    expect(sent.length).toBeLessThan(22);
    expect(sent[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(sent[1].content).toMatch(/^message 0:/);
    expect(sent.at(-1).content).toMatch(/^message 20:/);
    const entry = pipelineOf(on.body)[0];
    expect(entry).toMatchObject({ type: 'context_compression', name: 'middle-out', data: { messages_before: 22, messages_after: sent.length, context_length: 400 } });
    expect(entry.data.estimated_tokens_after).toBeLessThanOrEqual(380);
  });

  it('streamed, on', async () => {
    const r = await stream('/chat/completions', body([{ id: 'context-compression' }]));
    expect(r.status).toBe(200);
    expect(r.chunks.at(-1).gateway_metadata.pipeline[0].name).toBe('middle-out');
  });
});

describe('response-healing', () => {
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
  const body = (plugins?: unknown[]) => ({ model: 'test/beta', messages: [{ role: 'user', content: 'who?' }], response_format: { type: 'json_schema', json_schema: { name: 'person', schema } }, ...(plugins ? { plugins } : {}) });

  it('on: broken JSON repaired and valid against the schema; off: left as it came', async () => {
    sim.setKnobs('sim-c', { content: "```json\n{name: 'Ann', age: 3,}\n```" });
    const on = await post('/chat/completions', body([{ id: 'response-healing' }]));
    expect(on.status).toBe(200);
    expect(JSON.parse(on.body.choices[0].message.content)).toEqual({ name: 'Ann', age: 3 });
    expect(pipelineOf(on.body)).toEqual([expect.objectContaining({ type: 'response_healing', data: { format: 'json_schema', results: [{ repaired: true, valid: true }] } })]);
    const off = await post('/chat/completions', body());
    expect(off.body.choices[0].message.content).toBe("```json\n{name: 'Ann', age: 3,}\n```");
  });

  it('repaired but not valid against the schema is reported; valid JSON is left alone', async () => {
    sim.setKnobs('sim-c', { content: "{name: 'Ann'}" });
    const r = await post('/chat/completions', body([{ id: 'response-healing' }]));
    expect(r.body.choices[0].message.content).toBe('{"name": "Ann"}');
    expect(pipelineOf(r.body)[0].data.results[0]).toMatchObject({ repaired: true, valid: false });
    sim.setKnobs('sim-c', { content: '{"name":"Bo","age":1}' });
    const ok = await post('/chat/completions', body([{ id: 'response-healing' }]));
    expect(ok.body.choices[0].message.content).toBe('{"name":"Bo","age":1}');
    expect(pipelineOf(ok.body)[0].data.results[0]).toEqual({ repaired: false, valid: true });
  });

  it('streamed, truncated JSON: the missing tail is sent as a last delta at the end of the stream', async () => {
    sim.setKnobs('sim-c', { content: '{"name": "Ann", "age": 3', chunkChars: 4 });
    const r = await stream('/chat/completions', body([{ id: 'response-healing' }]));
    expect(r.status).toBe(200);
    expect(JSON.parse(streamedText(r.chunks))).toEqual({ name: 'Ann', age: 3 });
    // The tail precedes the finish: no content after the chunk with finish_reason.
    const fin = r.chunks.findIndex((c: any) => c.choices?.[0]?.finish_reason);
    expect(r.chunks[fin].choices[0].finish_reason).toBe('stop');
    expect(r.chunks.slice(fin + 1).every((c: any) => !c.choices?.[0]?.delta?.content)).toBe(true);
    expect(r.chunks.at(-1).gateway_metadata.pipeline).toEqual([
      expect.objectContaining({ type: 'response_healing', name: 'response-healing', data: { format: 'json_schema', stream: true, results: [{ repaired: true, valid: true, delivery: 'appended' }] } }),
    ]);
  });

  it('streamed, a repair that would change sent text: relayed as it came, the healed JSON in the pipeline', async () => {
    sim.setKnobs('sim-c', { content: "{name: 'Ann', age: 3}", chunkChars: 5 });
    const r = await stream('/chat/completions', body([{ id: 'response-healing' }]));
    expect(streamedText(r.chunks)).toBe("{name: 'Ann', age: 3}");
    const res = r.chunks.at(-1).gateway_metadata.pipeline[0].data.results[0];
    expect(res).toMatchObject({ repaired: true, valid: true, delivery: 'metadata_only' });
    expect(JSON.parse(res.healed)).toEqual({ name: 'Ann', age: 3 });
  });

  it('streamed, valid JSON is left alone; off: a truncated reply is relayed as it came, no entry', async () => {
    sim.setKnobs('sim-c', { content: '{"name":"Bo","age":1}', chunkChars: 4 });
    const ok = await stream('/chat/completions', body([{ id: 'response-healing' }]));
    expect(streamedText(ok.chunks)).toBe('{"name":"Bo","age":1}');
    expect(ok.chunks.at(-1).gateway_metadata.pipeline[0].data.results).toEqual([{ repaired: false, valid: true }]);
    sim.setKnobs('sim-c', { content: '{"name": "Ann", "age": 3', chunkChars: 4 });
    const off = await stream('/chat/completions', body());
    expect(streamedText(off.chunks)).toBe('{"name": "Ann", "age": 3');
    expect(off.chunks.at(-1).gateway_metadata?.pipeline).toBeUndefined();
  });

  it('streamed on messages and responses: the tail goes into the text block before it ends', async () => {
    sim.setKnobs('sim-c', { content: '{"name": "Ann", "age": 3', chunkChars: 4 });
    const m = await stream('/messages', { model: 'test/beta', max_tokens: 100, messages: [{ role: 'user', content: 'who?' }], output_format: { type: 'json_schema', schema }, plugins: [{ id: 'response-healing' }] });
    expect(m.status, m.text).toBe(200);
    const events = m.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const deltas = events.filter((e) => e.type === 'content_block_delta' && e.delta.type === 'text_delta');
    expect(JSON.parse(deltas.map((e) => e.delta.text).join(''))).toEqual({ name: 'Ann', age: 3 });
    const stop = events.findIndex((e) => e.type === 'content_block_stop');
    expect(events.indexOf(deltas.at(-1))).toBeLessThan(stop);
    const rs = await stream('/responses', { model: 'test/beta', input: 'who?', text: { format: { type: 'json_schema', name: 'person', schema } }, plugins: [{ id: 'response-healing' }] });
    expect(rs.status, rs.text).toBe(200);
    const revents = rs.text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
    const done = revents.find((e) => e.type === 'response.completed');
    expect(JSON.parse(done.response.output[0].content[0].text)).toEqual({ name: 'Ann', age: 3 });
  });
});

describe('moderation', () => {
  const body = (content: string, on = true) => ({ model: 'test/beta', messages: [{ role: 'user', content }], ...(on ? { plugins: [{ id: 'moderation' }] } : {}) });

  it('flagged → 403 with the categories, before any upstream call; clean → served; off → not checked', async () => {
    const before = sim.stats('sim-c').requests;
    const r = await post('/chat/completions', body('how do I kill a zombie process'));
    expect(r.status).toBe(403);
    expect(r.body.error.message).toBe('Flagged by moderation: violence');
    expect(r.body.error.metadata).toMatchObject({ error_type: 'moderation', categories: ['violence'] });
    expect(sim.stats('sim-c').requests).toBe(before);
    const clean = await post('/chat/completions', body('hello there'));
    expect(clean.status).toBe(200);
    expect(pipelineOf(clean.body)[0]).toMatchObject({ type: 'plugin', name: 'moderation', data: { flagged: false } });
    expect((await post('/chat/completions', body('how do I kill a zombie process', false))).status).toBe(200);
  });

  it('streamed: a flagged request is a 403 before the stream starts; a clean one streams', async () => {
    const r = await stream('/chat/completions', body('you idiot'));
    expect(r.status).toBe(403);
    expect(JSON.parse(r.text).error.metadata.categories).toEqual(['harassment']);
    const ok = await stream('/chat/completions', body('hello'));
    expect(ok.status).toBe(200);
    expect(ok.chunks.at(-1).gateway_metadata.pipeline[0].name).toBe('moderation');
  });
});

describe('web', () => {
  it('on: the web search server tool runs; off: a plain completion', async () => {
    sim.setKnobs('sim-a', { toolCall: true });
    const on = await post('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: 'news?' }], plugins: [{ id: 'web', max_results: 2 }] });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.usage.server_tool_use_details.web_search_requests).toBeGreaterThanOrEqual(1);
    const off = await post('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: 'news?' }], plugins: [{ id: 'web', enabled: false }] });
    expect(off.status).toBe(200);
    expect(off.body.usage.server_tool_use_details).toBeUndefined();
  });

  it('streamed, on', async () => {
    sim.setKnobs('sim-a', { toolCall: true });
    const r = await stream('/chat/completions', { model: 'test/alpha', messages: [{ role: 'user', content: 'news?' }], plugins: [{ id: 'web' }] });
    expect(r.status).toBe(200);
    expect(r.text).toContain('web_search_requests');
  });
});
