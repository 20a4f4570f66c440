/**
 * The OpenAI Responses skin: stateless checks, request → IR and IR → Response object with fixtures from OpenAI's
 * documentation (test/inbound/fixtures/openai-responses, each citing its page), the error envelope, and the stream
 * encoder, whose output is served from a local HTTP server and consumed by the official `openai` SDK
 * (`responses.stream(...).finalResponse()` and `responses.create({stream: true})`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import type { IrPart, IrResponse, IrStreamEvent } from '../../src/core/ir.js';
import { HttpError } from '../../src/core/errors.js';
import { checkStateless, responsesEcho, responsesInbound } from '../../src/inbound/responses.js';
import { encode, fixture, meta, parseSse, sseEvents, startServer, usage, type Json, type TestServer } from './util.js';

const textInput = fixture('openai-responses', 'text-input');
const imageInput = fixture('openai-responses', 'image-input');
const functions = fixture('openai-responses', 'functions');
const reasoningFx = fixture('openai-responses', 'reasoning');
const structured = fixture('openai-responses', 'structured-outputs');

const M = () => meta({ model: 'openai/gpt-4.1', provider: 'OpenAI' });

function irResponse(content: IrPart[], over: Partial<IrResponse> = {}): IrResponse {
  return { id: 'resp_up', model: 'gpt-4.1', content, finish_reason: 'stop', native_finish_reason: 'stop', usage: usage(), ...over };
}

function expect400(fn: () => unknown, text: string | RegExp): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(HttpError);
    expect((e as HttpError).status).toBe(400);
    expect((e as HttpError).message).toMatch(text);
    return;
  }
  throw new Error('expected a 400');
}

describe('responses: stateless checks', () => {
  it('store: true, previous_response_id, background and conversation are refused', () => {
    expect(checkStateless({ input: 'x' })).toBeNull();
    expect(checkStateless({ input: 'x', store: false, previous_response_id: null })).toBeNull();
    expect(checkStateless({ store: true })).toMatch(/store/);
    expect(checkStateless({ previous_response_id: 'resp_123' })).toMatch(/previous_response_id/);
    expect(checkStateless({ background: true })).toMatch(/background/);
    expect(checkStateless({ conversation: 'conv_1' })).toMatch(/conversation/);
    expect400(() => responsesInbound.toIr({ input: 'x', store: true }), /stateless/);
  });
});

// ---- request → IR ------------------------------------------------------------------------------------------------

describe('responses: request → IR (docs fixtures)', () => {
  it('string input → one user message (docs: text input)', () => {
    expect(responsesInbound.toIr(textInput.request)).toEqual({
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Tell me a three sentence bedtime story about a unicorn.' }] }],
      stream: false,
    });
  });

  it('input_text + input_image parts (docs: image input)', () => {
    const ir = responsesInbound.toIr({ ...imageInput.request, input: [{ ...imageInput.request.input[0], content: [...imageInput.request.input[0].content, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' }] }] });
    expect(ir.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is in this image?' },
          { type: 'image', url: imageInput.request.input[0].content[1].image_url },
          { type: 'image', data: 'iVBORw0KGgo=', media_type: 'image/png', detail: 'low' },
        ],
      },
    ]);
  });

  it('function tools and tool_choice (docs: functions)', () => {
    const ir = responsesInbound.toIr(functions.request);
    const t = functions.request.tools[0];
    expect(ir.tools).toEqual([{ name: t.name, description: t.description, parameters: t.parameters }]);
    expect(ir.tool_choice).toEqual({ type: 'auto' });
    expect(responsesInbound.toIr({ input: 'x', tool_choice: { type: 'function', name: 'get_current_weather' } }).tool_choice).toEqual({ type: 'tool', name: 'get_current_weather' });
    expect(responsesInbound.toIr({ input: 'x', tool_choice: 'required', parallel_tool_calls: false }).parallel_tool_calls).toBe(false);
    expect(responsesInbound.toIr({ input: 'x', tools: [{ type: 'function', name: 'f', strict: true, parameters: null }] }).tools).toEqual([
      { name: 'f', parameters: { type: 'object', properties: {} }, strict: true },
    ]);
  });

  it('gateway server tools (openrouter:*, web_search*) stay out of the IR tool list', () => {
    const ir = responsesInbound.toIr({ input: 'x', tools: [{ type: 'web_search_preview' }, { type: 'openrouter:web_fetch' }, functions.request.tools[0]] });
    expect(ir.tools?.map((t) => t.name)).toEqual(['get_current_weather']);
  });

  it('function_call → assistant tool_call (call_id is the id); function_call_output → user tool_result (docs: function calling)', () => {
    const ir = responsesInbound.toIr({ model: 'gpt-4.1', input: functions.followup_input, tools: functions.request.tools });
    expect(ir.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is the weather like in Boston today?' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_unLAR8MvFNptuiZK6K6HCy5k', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'call_unLAR8MvFNptuiZK6K6HCy5k', content: '{"temperature": 14}' }] },
    ]);
  });

  it('one assistant turn (reasoning, message, calls) is one IR message; consecutive outputs share one user message', () => {
    const ir = responsesInbound.toIr({
      input: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        reasoningFx.reasoning_item,
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking both.', annotations: [] }] },
        { type: 'function_call', call_id: 'c1', name: 'w', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'c2', name: 'w', arguments: '{"city":"Rome"}' },
        { type: 'function_call_output', call_id: 'c1', output: '20C' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: '25C' }] },
        { role: 'user', content: [{ type: 'input_text', text: 'Thanks' }] },
      ],
    });
    expect(ir.messages.map((m) => [m.role, m.content.map((p) => p.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['reasoning', 'redacted_reasoning', 'text', 'tool_call', 'tool_call']],
      ['user', ['tool_result', 'tool_result']],
      ['user', ['text']],
    ]);
    expect(ir.messages[2].content[1]).toEqual({ type: 'tool_result', tool_call_id: 'c2', content: [{ type: 'text', text: '25C' }] });
  });

  it('reasoning items: summary → reasoning marked summary, encrypted_content → redacted; reasoning config (docs: reasoning)', () => {
    const ir = responsesInbound.toIr({ ...reasoningFx.request, input: [{ role: 'user', content: 'Q' }, reasoningFx.reasoning_item] });
    expect(ir.reasoning).toEqual({ effort: 'high', summary: 'auto' });
    expect(ir.messages[1].content).toEqual([
      { type: 'reasoning', text: reasoningFx.reasoning_item.summary[0].text, summary: true },
      { type: 'redacted_reasoning', data: reasoningFx.reasoning_item.encrypted_content },
    ]);
    // reasoning_text content is full reasoning; a signature (the gateway's own output) makes summary text full reasoning.
    const full = responsesInbound.toIr({
      input: [
        { role: 'user', content: 'Q' },
        { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Full thoughts' }] },
        { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'Signed thoughts' }], signature: 'sig-1' },
      ],
    });
    expect(full.messages[1].content).toEqual([
      { type: 'reasoning', text: 'Full thoughts' },
      { type: 'reasoning', text: 'Signed thoughts', signature: 'sig-1' },
    ]);
  });

  it('text.format json_schema and system messages (docs: structured outputs)', () => {
    const ir = responsesInbound.toIr(structured.request);
    const f = structured.request.text.format;
    expect(ir.response_format).toEqual({ type: 'json_schema', name: 'calendar_event', schema: f.schema, strict: true });
    expect(ir.system).toEqual([{ type: 'text', text: 'Extract the event information.' }]);
    expect(ir.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Alice and Bob are going to a science fair on Friday.' }] }]);
    expect(responsesInbound.toIr({ input: 'x', text: { format: { type: 'json_object' } } }).response_format).toEqual({ type: 'json_object' });
    expect(responsesInbound.toIr({ input: 'x', text: { format: { type: 'text' } } }).response_format).toEqual({ type: 'text' });
  });

  it('instructions and developer messages → system (docs: text generation)', () => {
    expect(responsesInbound.toIr(structured.instructions_request).system).toEqual([{ type: 'text', text: 'Talk like a pirate.' }]);
    const dev = responsesInbound.toIr(structured.developer_request);
    expect(dev.system).toEqual([{ type: 'text', text: 'Talk like a pirate.' }]);
    expect(dev.messages).toHaveLength(1);
  });

  it('sampling and limits, user / safety_identifier, stream', () => {
    const ir = responsesInbound.toIr({ input: 'x', max_output_tokens: 300, temperature: 0.2, top_p: 0.8, top_k: 20, safety_identifier: 'user-hash', stream: true });
    expect(ir).toMatchObject({ max_tokens: 300, temperature: 0.2, top_p: 0.8, top_k: 20, user: 'user-hash', stream: true });
    expect(responsesInbound.toIr({ input: 'x', user: 'u1', safety_identifier: 's1' }).user).toBe('u1');
  });

  it('assistant history: output_text and refusal parts', () => {
    const ir = responsesInbound.toIr({
      input: [
        { role: 'user', content: 'x' },
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help.' }] },
        { role: 'user', content: 'y' },
      ],
    });
    expect(ir.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'refusal', text: 'I cannot help.' }] });
  });

  it('hosted tools and items the IR cannot carry are listed as dropped, not refused (they reach Responses upstreams)', () => {
    // Deliberate change (issue 15): these were 400s. (`local_shell` and `apply_patch` were listed here too; they are now
    // translated to function tools: responses-tools.test.ts.)
    const ir = responsesInbound.toIr({ input: [{ role: 'user', content: 'x' }, { type: 'web_search_call', id: 'ws_1' }], tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }, { type: 'computer_use_preview' }] });
    expect(ir.tools).toEqual([]);
    expect(ir.dropped_fields).toEqual(['tools[0] (file_search)', 'tools[1] (computer_use_preview)', 'input[1] (web_search_call)']);
  });

  it('input_file parts → IR documents (file_data split into data and media type, file_id, file_url; filename kept)', () => {
    const ir = responsesInbound.toIr({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', file_id: 'file-abc' },
            { type: 'input_file', file_url: 'https://x/a.pdf' },
          ],
        },
      ],
    });
    expect(ir.messages[0].content).toEqual([
      { type: 'document', filename: 'a.pdf', data: 'JVBERi0=', media_type: 'application/pdf' },
      { type: 'document', file_id: 'file-abc' },
      { type: 'document', url: 'https://x/a.pdf' },
    ]);
  });

  it('refuses what a stateless gateway / the IR cannot carry with a 400', () => {
    expect400(() => responsesInbound.toIr({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file-123' }] }] }), /file_id/);
    expect400(() => responsesInbound.toIr({ input: [{ type: 'item_reference', id: 'msg_1' }] }), /item_reference/);
    expect400(() => responsesInbound.toIr({ input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }] }), /input\[0\]\.content\[0\]: input_file needs file_data, file_id or file_url/);
    expect400(() => responsesInbound.toIr({ input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'JVBERi0=' }] }] }), /input\[0\]\.content\[0\]\.file_data must be a data URL/);
    expect400(() => responsesInbound.toIr({ input: [{ type: 'function_call_output', call_id: 'c', output: [{ type: 'input_file', file_id: 'f' }] }] }), /input_file/);
    expect400(() => responsesInbound.toIr({ input: 'x', tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [] } }), /tool_choice/);
    expect400(() => responsesInbound.toIr({ input: 'x', prompt: { id: 'pmpt_1' } }), /prompt/);
    expect400(() => responsesInbound.toIr({ instructions: 'only instructions' }), /input/);
  });
});

// ---- IR → Response -----------------------------------------------------------------------------------------------

describe('responses: IR → Response object (docs fixtures)', () => {
  it('text answer has the documented shape (docs: text input response)', () => {
    const doc = textInput.response;
    const u = doc.usage;
    const m = M();
    const body = responsesInbound.fromIr(irResponse([{ type: 'text', text: doc.output[0].content[0].text }], { usage: usage({ input: u.input_tokens, output: u.output_tokens }) }), m, textInput.request);
    // Every top-level field of the documented object is present.
    for (const k of Object.keys(doc)) expect(body, k).toHaveProperty(k);
    expect(body).toMatchObject({
      id: m.id,
      object: 'response',
      created_at: m.created,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'openai/gpt-4.1',
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: null,
      store: false,
      text: doc.text,
      tool_choice: doc.tool_choice,
      tools: doc.tools,
      truncation: doc.truncation,
      output_text: doc.output[0].content[0].text,
      usage: { ...u, cost: 0.00123, cost_details: { upstream_inference_cost: null, upstream_inference_input_cost: 0.001, upstream_inference_output_cost: 0.00023 } },
    });
    expect(body.output).toEqual([{ ...doc.output[0], id: `msg_${m.id.slice(4)}_0` }]);
    expect(typeof body.completed_at).toBe('number');
  });

  it('function call item; the request tools are echoed (docs: functions response)', () => {
    const doc = functions.response;
    const call = doc.output[0];
    const body = responsesInbound.fromIr(
      irResponse([{ type: 'tool_call', id: call.call_id, name: call.name, arguments: call.arguments }], { finish_reason: 'tool_calls', usage: usage({ input: 291, output: 23 }) }),
      M(),
      functions.request,
    );
    expect(body.status).toBe('completed');
    expect(body.output).toEqual([{ ...call, id: expect.stringMatching(/^fc_/) }]);
    expect(body.tools).toEqual(functions.request.tools);
    expect(body.usage).toMatchObject({ input_tokens: 291, output_tokens: 23, total_tokens: 314 });
  });

  it('reasoning summary + encrypted content → one reasoning item; reasoning tokens (docs: reasoning)', () => {
    const doc = reasoningFx.response;
    const item = reasoningFx.reasoning_item;
    const u = doc.usage;
    const body = responsesInbound.fromIr(
      irResponse(
        [
          { type: 'reasoning', text: item.summary[0].text, summary: true },
          { type: 'redacted_reasoning', data: item.encrypted_content },
          { type: 'text', text: doc.output[0].content[0].text },
        ],
        { usage: usage({ input: u.input_tokens, output: u.output_tokens, reasoning: u.output_tokens_details.reasoning_tokens }) },
      ),
      M(),
      reasoningFx.request,
    );
    expect(body.output).toEqual([
      { ...item, id: expect.stringMatching(/^rs_.*_0$/) },
      { ...doc.output[0], id: expect.stringMatching(/^msg_.*_1$/) },
    ]);
    expect(body.usage).toMatchObject({ ...u, input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 } });
    expect(body.reasoning).toEqual({ effort: 'high', summary: 'auto' });
  });

  it('signed full reasoning, refusal part, cached tokens', () => {
    const body = responsesInbound.fromIr(
      irResponse(
        [
          { type: 'reasoning', text: 'Thinking…', signature: 'sig-abc' },
          { type: 'text', text: 'Part one. ' },
          { type: 'refusal', text: 'I cannot share that.' },
        ],
        { usage: usage({ input: 100, cache_read: 60, cache_write: 10, output: 20 }) },
      ),
      M(),
    );
    expect(body.output).toEqual([
      { id: expect.any(String), type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking…' }], signature: 'sig-abc' },
      {
        id: expect.any(String),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'Part one. ', annotations: [] },
          { type: 'refusal', refusal: 'I cannot share that.' },
        ],
      },
    ]);
    expect(body.usage).toMatchObject({ input_tokens: 100, input_tokens_details: { cached_tokens: 60, cache_write_tokens: 10 } });
  });

  it('length → incomplete (max_output_tokens), content_filter → incomplete, error → failed; gateway_metadata', () => {
    const len = responsesInbound.fromIr(irResponse([{ type: 'text', text: 'cut' }], { finish_reason: 'length' }), M());
    expect(len).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, completed_at: null });
    expect(responsesInbound.fromIr(irResponse([], { finish_reason: 'content_filter' }), M()).incomplete_details).toEqual({ reason: 'content_filter' });
    const failed = responsesInbound.fromIr(irResponse([], { finish_reason: 'error' }), M());
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(responsesInbound.fromIr(irResponse([]), meta({ gateway_metadata: { strategy: 'fallback' } })).gateway_metadata).toEqual({ strategy: 'fallback' });
    expect(responsesInbound.fromIr(irResponse([]), M()).gateway_metadata).toBeUndefined();
  });

  it('both ways: output items sent back as input give the same IR parts', () => {
    const parts: IrPart[] = [
      { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
      { type: 'text', text: 'Calling the tool.' },
      { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ];
    const body = responsesInbound.fromIr(irResponse(parts, { finish_reason: 'tool_calls' }), M());
    const ir = responsesInbound.toIr({ input: [{ role: 'user', content: 'Q' }, ...(body.output as Json[])] });
    expect(ir.messages[1]).toEqual({ role: 'assistant', content: parts });
  });

  it('echo defaults without the request, and with it', () => {
    expect(responsesEcho(undefined)).toMatchObject({ instructions: null, tools: [], tool_choice: 'auto', parallel_tool_calls: true, text: { format: { type: 'text' } }, store: false });
    expect(responsesEcho({ instructions: 'Be brief', temperature: 0.3, max_output_tokens: 100, parallel_tool_calls: false, metadata: { a: 'b' } })).toMatchObject({
      instructions: 'Be brief',
      temperature: 0.3,
      max_output_tokens: 100,
      parallel_tool_calls: false,
      metadata: { a: 'b' },
    });
  });
});

describe('responses: error envelope', () => {
  it('{error:{code, message, metadata?}, error_type}', () => {
    expect(responsesInbound.errorBody(400, 'Invalid request parameters', null)).toEqual({ error: { code: 400, message: 'Invalid request parameters' }, error_type: 'invalid_request' });
    expect(responsesInbound.errorBody(502, 'Provider returned error', { error_type: 'provider_unavailable', provider_code: 500 })).toEqual({
      error: { code: 502, message: 'Provider returned error', metadata: { error_type: 'provider_unavailable', provider_code: 500 } },
      error_type: 'provider_unavailable',
    });
    expect(responsesInbound.errorBody(529, 'Provider returned error', null).error_type).toBe('provider_overloaded');
  });
});

// ---- SDK ---------------------------------------------------------------------------------------------------------

describe('responses: through the official openai SDK', () => {
  let server: TestServer;
  let client: OpenAI;
  beforeAll(async () => {
    server = await startServer();
    client = new OpenAI({ baseURL: server.url, apiKey: 'test-key', maxRetries: 0 });
  });
  afterAll(async () => server?.close());

  function streamOf(events: IrStreamEvent[], end: Parameters<typeof encode>[2], m = M(), request?: Json): string[] {
    return encode(responsesInbound.createStreamEncoder(m, request), events, end, m);
  }

  async function collect(pieces: string[], request: Json = { model: 'openai/gpt-4.1', input: 'Hello' }): Promise<ResponseStreamEvent[]> {
    server.reply = { sse: pieces };
    const stream = await client.responses.create({ ...(request as { model: string; input: string }), stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const ev of stream) events.push(ev);
    return events;
  }

  it('non-stream: responses.create parses the object and output_text works', async () => {
    const doc = textInput.response;
    server.reply = { json: responsesInbound.fromIr(irResponse([{ type: 'text', text: doc.output[0].content[0].text }], { usage: usage({ input: 36, output: 87 }) }), M(), textInput.request) };
    const r = await client.responses.create(textInput.request as { model: string; input: string });
    expect(r.output_text).toBe(doc.output[0].content[0].text);
    expect(r.status).toBe('completed');
    expect(r.usage).toMatchObject(doc.usage);
    expect(server.requests.at(-1)?.path).toBe('/responses');
  });

  it('error envelope surfaces as APIError with the status', async () => {
    server.reply = { status: 400, json: responsesInbound.errorBody(400, 'store: true is not supported', { error_type: 'invalid_request' }) };
    const err = await client.responses.create({ model: 'm', input: 'x', store: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(400);
    expect((err as APIError).message).toMatch(/store: true is not supported/);
  });

  it('text stream: typed events with sequence numbers; the SDK reassembles output_text and usage', async () => {
    const events: IrStreamEvent[] = [
      { type: 'start', id: null, model: null },
      { type: 'text_delta', index: 0, text: 'In a peaceful grove' },
      { type: 'text_delta', index: 0, text: ' beneath a silver moon.' },
      { type: 'finish', finish_reason: 'stop', native_finish_reason: 'stop' },
    ];
    const m = meta({ model: 'openai/gpt-4.1', gateway_metadata: { attempt: 1 } });
    const pieces = streamOf(events, { usage: usage({ input: 36, output: 87, cache_read: 6 }) }, m);
    const frames = parseSse(pieces.join(''));
    expect(frames.at(-1)).toEqual({ event: null, data: '[DONE]' });
    const raw = sseEvents(pieces.join(''));
    expect(raw.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(raw.map((e) => e.sequence_number)).toEqual(raw.map((_, i) => i));
    expect(raw[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    expect(raw[0].response.gateway_metadata).toBeUndefined();
    const done = raw.at(-1)!.response;
    expect(done).toMatchObject({ status: 'completed', output_text: 'In a peaceful grove beneath a silver moon.', gateway_metadata: { attempt: 1 } });
    expect(done.usage).toMatchObject({ input_tokens: 36, input_tokens_details: { cached_tokens: 6 }, output_tokens: 87, total_tokens: 123, cost: 0.00123 });

    // responses.create({stream: true}) yields the same events.
    const seen = await collect(pieces);
    expect(seen.map((e) => e.type)).toEqual(raw.map((e) => e.type));

    // responses.stream(...).finalResponse() reassembles.
    server.reply = { sse: pieces };
    const stream = client.responses.stream({ model: 'openai/gpt-4.1', input: 'Hello' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas).toEqual(['In a peaceful grove', ' beneath a silver moon.']);
    expect(final.output_text).toBe('In a peaceful grove beneath a silver moon.');
    expect(final.usage).toMatchObject({ input_tokens: 36, output_tokens: 87 });
  });

  it('interleaved reasoning (signed) + encrypted + text + function call: summary and argument events, SDK reassembly', async () => {
    const events: IrStreamEvent[] = [
      { type: 'start', id: null, model: null },
      { type: 'reasoning_delta', index: 0, text: 'Let me solve this step by step:' },
      { type: 'reasoning_delta', index: 0, text: ' 27 * 453' },
      { type: 'reasoning_signature', index: 0, signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' },
      { type: 'redacted_reasoning', index: 1, data: 'gAAAAABoISQ24OyVRYbk...' },
      { type: 'text_delta', index: 2, text: '27 * 453 = 12,231. ' },
      { type: 'part_end', index: 2 },
      { type: 'text_delta', index: 3, text: 'Checking the weather.' },
      { type: 'tool_call_start', index: 4, id: 'call_unLAR8MvFNptuiZK6K6HCy5k', name: 'get_current_weather' },
      { type: 'tool_call_delta', index: 4, arguments: '{"location":"Bos' },
      { type: 'tool_call_delta', index: 4, arguments: 'ton, MA","unit":"celsius"}' },
      { type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_calls' },
      { type: 'usage', usage: usage({ input: 291, output: 60, reasoning: 30 }) },
    ];
    const pieces = streamOf(events, { usage: null }, M(), functions.request);
    const raw = sseEvents(pieces.join(''));
    expect(raw.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added', // reasoning
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added', // message
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added', // function call
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const reasoningDone = raw[8].item;
    expect(reasoningDone).toMatchObject({ type: 'reasoning', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...', encrypted_content: 'gAAAAABoISQ24OyVRYbk...' });
    expect(raw.at(-1)!.response.tools).toEqual(functions.request.tools);

    server.reply = { sse: pieces };
    const final = await client.responses.stream({ model: 'openai/gpt-4.1', input: 'Hello' }).finalResponse();
    // (toMatchObject: the SDK adds its own `parsed` / `parsed_arguments` fields.)
    expect(final.output).toMatchObject([
      {
        id: expect.stringMatching(/^rs_/),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Let me solve this step by step: 27 * 453' }],
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...',
        encrypted_content: 'gAAAAABoISQ24OyVRYbk...',
      },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: '27 * 453 = 12,231. ', annotations: [] },
          { type: 'output_text', text: 'Checking the weather.', annotations: [] },
        ],
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        call_id: 'call_unLAR8MvFNptuiZK6K6HCy5k',
        name: 'get_current_weather',
        arguments: '{"location":"Boston, MA","unit":"celsius"}',
        status: 'completed',
      },
    ]);
    expect(final.output_text).toBe('27 * 453 = 12,231. Checking the weather.');
    expect(final.usage).toMatchObject({ input_tokens: 291, output_tokens: 60, output_tokens_details: { reasoning_tokens: 30 }, total_tokens: 351 });

    // Both ways: the reassembled output sent back as input gives the IR parts.
    const ir = responsesInbound.toIr({ input: [{ role: 'user', content: 'Q' }, ...(final.output as unknown as Json[])] });
    expect(ir.messages[1].content).toEqual([
      { type: 'reasoning', text: 'Let me solve this step by step: 27 * 453', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' },
      { type: 'redacted_reasoning', data: 'gAAAAABoISQ24OyVRYbk...' },
      { type: 'text', text: '27 * 453 = 12,231. ' },
      { type: 'text', text: 'Checking the weather.' },
      { type: 'tool_call', id: 'call_unLAR8MvFNptuiZK6K6HCy5k', name: 'get_current_weather', arguments: '{"location":"Boston, MA","unit":"celsius"}' },
    ]);
  });

  it('length → response.incomplete with max_output_tokens', async () => {
    const pieces = streamOf(
      [
        { type: 'text_delta', index: 0, text: 'Once upon a' },
        { type: 'finish', finish_reason: 'length', native_finish_reason: 'length' },
      ],
      { usage: usage({ input: 5, output: 3 }) },
    );
    const seen = await collect(pieces);
    const last = seen.at(-1)!;
    expect(last.type).toBe('response.incomplete');
    if (last.type === 'response.incomplete') expect(last.response).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('refusal stream: refusal content part events', async () => {
    const pieces = streamOf([{ type: 'refusal_delta', index: 0, text: "I'm sorry, I can't help with that." }], { usage: null });
    const types = sseEvents(pieces.join('')).map((e) => e.type);
    expect(types).toContain('response.refusal.delta');
    expect(types).toContain('response.refusal.done');
    server.reply = { sse: pieces };
    const final = await client.responses.stream({ model: 'm', input: 'x' }).finalResponse();
    expect(final.output[0]).toMatchObject({ type: 'message', content: [{ type: 'refusal', refusal: "I'm sorry, I can't help with that." }] });
    expect(final.status).toBe('incomplete');
  });

  it('error after the stream started: `error` then `response.failed` with response.error; the SDK sees the failure', async () => {
    const m = meta({ model: 'openai/gpt-4.1', gateway_metadata: { attempt: 2 } });
    const pieces = streamOf(
      [
        { type: 'start', id: null, model: null },
        { type: 'text_delta', index: 0, text: 'Partial' },
      ],
      { error: { status: 429, message: 'Rate limit exceeded', type: 'rate_limit_exceeded' } },
      m,
    );
    const raw = sseEvents(pieces.join(''));
    expect(raw.slice(-2).map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(raw.at(-2)).toMatchObject({ code: 'rate_limit_exceeded', message: 'Rate limit exceeded', param: null });
    expect(raw.at(-1)!.response).toMatchObject({
      status: 'failed',
      error: { code: 'rate_limit_exceeded', message: 'Rate limit exceeded' },
      error_type: 'rate_limit_exceeded',
      gateway_metadata: { attempt: 2 },
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Partial' }] }],
    });

    const seen = await collect(pieces);
    expect(seen.map((e) => e.type).slice(-2)).toEqual(['error', 'response.failed']);
    // The SDK's stream helper rejects with the `error` event itself (its `error` channel), as with OpenAI's own API.
    server.reply = { sse: pieces };
    const stream = client.responses.stream({ model: 'm', input: 'x' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const err = await stream.finalResponse().catch((e: unknown) => e);
    expect(err).toMatchObject({ type: 'error', code: 'rate_limit_exceeded', message: 'Rate limit exceeded' });
    expect(deltas).toEqual(['Partial']);

    const enc = responsesInbound.createStreamEncoder(m);
    enc.start();
    enc.error(502, 'Provider returned error', 'provider_unavailable', m);
    expect(enc.finish(null, m)).toBe('');
    expect(enc.event({ type: 'text_delta', index: 0, text: 'late' })).toBe('');
  });

  it('late signature and late tool arguments still reach the final Response', () => {
    const pieces = streamOf(
      [
        { type: 'reasoning_delta', index: 0, text: 'hmm' },
        { type: 'tool_call_start', index: 1, id: 'call_1', name: 'f' },
        { type: 'tool_call_delta', index: 1, arguments: '{"a":' },
        { type: 'text_delta', index: 2, text: 'x' },
        { type: 'reasoning_signature', index: 0, signature: 'late-sig' },
        { type: 'tool_call_delta', index: 1, arguments: '1}' },
      ],
      { usage: null },
    );
    const final = sseEvents(pieces.join('')).at(-1)!.response;
    expect(final.output[0]).toMatchObject({ type: 'reasoning', signature: 'late-sig' });
    expect(final.output[1]).toMatchObject({ type: 'function_call', arguments: '{"a":1}' });
  });
});
