/**
 * Gemini adapter, request building: URL and auth, contents (roles, merging), parts (text, images, tool calls and
 * results, thought signatures), tools and tool config, generation config (parameters, JSON output, thinking).
 */
import { describe, expect, it } from 'vitest';
import type { IrMessage } from '../../../src/core/ir.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { cleanSchema, googleAdapter, toThinkingConfig } from '../../../src/providers/google/index.js';
import { context, endpoint, fixture, irRequest, provider } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const body = (extra: Parameters<typeof irRequest>[0] = {}, ctx = context()): any => JSON.parse(googleAdapter.buildRequest(irRequest(extra), ctx).body);

describe('URL and headers', () => {
  it('targets :generateContent, or :streamGenerateContent?alt=sse when streaming', () => {
    const r = googleAdapter.buildRequest(irRequest(), context());
    expect(r.url.toString()).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    const s = googleAdapter.buildRequest(irRequest({ stream: true }), context());
    expect(s.url.toString()).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(s.headers.accept).toBe('text/event-stream');
  });

  it('uses the endpoint upstream model, a trailing slash in baseUrl, and full model resource names', () => {
    const ctx = context({ provider: provider({ baseUrl: 'http://127.0.0.1:9/gem/v1beta/' }), endpoint: endpoint('models/gemini-2.5-pro') });
    expect(googleAdapter.buildRequest(irRequest({ model: 'ignored' }), ctx).url.toString()).toBe(
      'http://127.0.0.1:9/gem/v1beta/models/gemini-2.5-pro:generateContent',
    );
  });

  it('sends the key in x-goog-api-key (never in the URL), the content type and the provider headers', () => {
    const ctx = context({ provider: provider({ headers: { 'x-extra': '1' } }) });
    const r = googleAdapter.buildRequest(irRequest(), ctx);
    expect(r.headers['x-goog-api-key']).toBe('test-key');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers['x-extra']).toBe('1');
    expect(r.url.search).not.toContain('key=');
    expect(r.headers.authorization).toBeUndefined();
    expect(googleAdapter.buildRequest(irRequest(), context({ apiKey: null })).headers['x-goog-api-key']).toBeUndefined();
  });
});

describe('contents', () => {
  it('puts system parts in systemInstruction and maps roles to user/model', () => {
    const b = body({
      system: [{ type: 'text', text: 'You are a cat.' }, { type: 'text', text: 'Answer briefly.' }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Meow' }] },
        { role: 'user', content: [{ type: 'text', text: 'Why?' }] },
      ],
    });
    expect(b.systemInstruction).toEqual({ parts: [{ text: 'You are a cat.' }, { text: 'Answer briefly.' }] });
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Meow' }] },
      { role: 'user', parts: [{ text: 'Why?' }] },
    ]);
  });

  it('merges consecutive messages of the same role and skips empty ones', () => {
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'a' }] },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: [] },
        { role: 'user', content: [{ type: 'text', text: 'c' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'd' }] },
        { role: 'assistant', content: [{ type: 'refusal', text: 'e' }] },
      ],
    });
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }, { text: 'c' }] },
      { role: 'model', parts: [{ text: 'd' }, { text: 'e' }] },
    ]);
    expect(b.systemInstruction).toBeUndefined();
  });

  it('sends base64 images and data: URLs as inlineData, http(s) URLs as fileData', () => {
    const b = body({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', data: 'iVBORw0KGgo=', media_type: 'image/png' },
            { type: 'image', url: 'data:image/jpeg;base64,/9j/4AAQ' },
            { type: 'image', url: 'data:image/svg+xml,%3Csvg%2F%3E' },
            { type: 'image', url: 'https://example.com/cat.webp?x=1' },
            { type: 'image', url: 'https://example.com/picture' },
            { type: 'image', url: 'gs://bucket/pic.jpg', media_type: 'image/jpeg' },
          ],
        },
      ],
    });
    expect(b.contents[0].parts).toEqual([
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
      { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } },
      { inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
      { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp?x=1' } },
      { fileData: { fileUri: 'https://example.com/picture' } },
      { fileData: { mimeType: 'image/jpeg', fileUri: 'gs://bucket/pic.jpg' } },
    ]);
  });
});

describe('tool calls and results', () => {
  const TOOLS = [
    {
      name: 'find_theaters',
      description: 'find theaters based on location and optionally movie title',
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { location: { type: 'string' }, movie: { type: ['string', 'null'] } },
        required: ['location'],
        additionalProperties: false,
      },
    },
    { name: 'now', parameters: { type: 'object', properties: {} } },
  ];

  it('declares functions with parametersJsonSchema (JSON Schema kept, $schema dropped, empty schemas omitted)', () => {
    const b = body({ tools: TOOLS });
    expect(b.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'find_theaters',
            description: 'find theaters based on location and optionally movie title',
            parametersJsonSchema: {
              type: 'object',
              properties: { location: { type: 'string' }, movie: { type: ['string', 'null'] } },
              required: ['location'],
              additionalProperties: false,
            },
          },
          { name: 'now' },
        ],
      },
    ]);
    expect(b.toolConfig).toBeUndefined();
  });

  it('maps tool_choice to functionCallingConfig', () => {
    expect(body({ tools: TOOLS, tool_choice: { type: 'auto' } }).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(body({ tools: TOOLS, tool_choice: { type: 'none' } }).toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(body({ tools: TOOLS, tool_choice: { type: 'required' } }).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(body({ tools: TOOLS, tool_choice: { type: 'tool', name: 'now' } }).toolConfig).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['now'] },
    });
    expect(body({ tool_choice: { type: 'required' } }).toolConfig).toBeUndefined();
  });

  it('round-trips a documented function-calling turn: call by name, response matched by the IR id', () => {
    // The multi-turn request of the cookbook "Function calling with REST" notebook, built from IR.
    const messages: IrMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'Which theaters in Mountain View show Barbie movie?' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_call', id: 'call_abc', name: 'find_theaters', arguments: '{"location":"Mountain View, CA","movie":"Barbie"}' }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_call_id: 'call_abc', content: '{"movie":"Barbie","theaters":[{"name":"AMC Mountain View 16"}]}' }],
      },
    ];
    const b = body({ messages, tools: TOOLS });
    expect(b.contents).toEqual([
      { role: 'user', parts: [{ text: 'Which theaters in Mountain View show Barbie movie?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'find_theaters', args: { location: 'Mountain View, CA', movie: 'Barbie' } } }] },
      {
        role: 'user',
        parts: [{ functionResponse: { name: 'find_theaters', response: { content: '{"movie":"Barbie","theaters":[{"name":"AMC Mountain View 16"}]}' } } }],
      },
    ]);
    // No ids go upstream (the Developer API matches calls by name).
    expect(JSON.stringify(b)).not.toContain('call_abc');
  });

  it('round-trips a parsed response: generated ids find their names again, parallel results merge into one content', () => {
    const res = googleAdapter.parseResponse(fixture('parallel-calls-response.json'));
    const calls = res.content.filter((p) => p.type === 'tool_call');
    expect(calls.map((c) => c.id)).toEqual(['call_Xk0pabCDEfGh_0', 'call_Xk0pabCDEfGh_1']);
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Temperatures in Paris and London?' }] },
        { role: 'assistant', content: res.content },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: calls[1].id, content: '12C' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: calls[0].id, content: 'boom', is_error: true }] },
      ],
    });
    expect(b.contents[1]).toEqual({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_current_temperature', args: { location: 'Paris' } }, thoughtSignature: '<Signature_A>' },
        { functionCall: { name: 'get_current_temperature', args: { location: 'London' } } },
      ],
    });
    expect(b.contents[2]).toEqual({
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_current_temperature', response: { content: '12C' } } },
        { functionResponse: { name: 'get_current_temperature', response: { error: 'boom' } } },
      ],
    });
  });

  it('resolves a reused id to the most recent earlier call and sends rich results with their images', () => {
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 'call_0', name: 'first', arguments: '' }] },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'call_0', content: 'one' }] },
        { role: 'assistant', content: [{ type: 'tool_call', id: 'call_0', name: 'second', arguments: 'not json' }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_call_id: 'call_0',
              content: [
                { type: 'text', text: 'line 1' },
                { type: 'image', data: 'AAAA', media_type: 'image/png' },
                { type: 'text', text: 'line 2' },
              ],
            },
          ],
        },
      ],
    });
    expect(b.contents[1].parts[0]).toEqual({ functionCall: { name: 'first', args: {} } });
    expect(b.contents[2].parts[0].functionResponse.name).toBe('first');
    expect(b.contents[3].parts[0]).toEqual({ functionCall: { name: 'second', args: {} } });
    expect(b.contents[4].parts).toEqual([
      { functionResponse: { name: 'second', response: { content: 'line 1\nline 2' } } },
      { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
    ]);
  });

  it('rejects a tool result whose id matches no earlier call with a 400', () => {
    const run = () => body({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_call_id: 'nope', content: 'x' }] }] });
    expect(run).toThrow(UpstreamError);
    try {
      run();
    } catch (e) {
      expect((e as UpstreamError).status).toBe(400);
      expect((e as UpstreamError).type).toBe('invalid_request');
    }
  });
});

describe('thought signatures', () => {
  it('sends a parsed thinking answer back with the signature on the part it came on (thought text dropped)', () => {
    const res = googleAdapter.parseResponse(fixture('thinking-response.json'));
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'How do I use three pool balls to sum up to 30?' }] },
        { role: 'assistant', content: res.content },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
    });
    const answer = JSON.parse(fixture('thinking-response.json')).candidates[0].content.parts[1];
    // The unsigned thought summary is not sent; the signed answer part is sent exactly as received.
    expect(b.contents[1]).toEqual({ role: 'model', parts: [answer] });
  });

  it('keeps a signature on a thought part, and on an empty trailing part when nothing follows it', () => {
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'thinking…', signature: 'SIG1' },
            { type: 'text', text: 'answer' },
            { type: 'reasoning', text: '', signature: 'SIG2' },
            { type: 'reasoning', text: '', signature: 'SIG3' },
            { type: 'redacted_reasoning', data: 'opaque' },
          ],
        },
      ],
    });
    expect(b.contents[1].parts).toEqual([
      { text: 'thinking…', thought: true, thoughtSignature: 'SIG1' },
      { text: 'answer' },
      { text: '', thoughtSignature: 'SIG2' },
      { text: '', thoughtSignature: 'SIG3' },
    ]);
  });

  it('ignores reasoning parts in user messages', () => {
    const b = body({ messages: [{ role: 'user', content: [{ type: 'reasoning', text: '', signature: 'S' }, { type: 'text', text: 'q' }] }] });
    expect(b.contents).toEqual([{ role: 'user', parts: [{ text: 'q' }] }]);
  });
});

describe('generation config', () => {
  it('maps sampling parameters', () => {
    const b = body({ temperature: 0.2, top_p: 0.9, top_k: 40, max_tokens: 512, stop: ['END'], seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5 });
    expect(b.generationConfig).toEqual({
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      maxOutputTokens: 512,
      stopSequences: ['END'],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: -0.5,
    });
  });

  it('omits generationConfig when nothing is set, and ignores an empty stop list', () => {
    expect(body().generationConfig).toBeUndefined();
    expect(body({ stop: [] }).generationConfig).toBeUndefined();
    expect(body({ response_format: { type: 'text' } }).generationConfig).toBeUndefined();
  });

  it('asks for JSON output: json_object → responseMimeType, json_schema → + responseJsonSchema', () => {
    expect(body({ response_format: { type: 'json_object' } }).generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { recipe: { $ref: '#/$defs/recipe', description: 'dropped: $ref siblings are not allowed' } },
      required: ['recipe'],
      additionalProperties: false,
      $defs: { recipe: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
    };
    expect(body({ response_format: { type: 'json_schema', name: 'r', schema, strict: true } }).generationConfig).toEqual({
      responseMimeType: 'application/json',
      responseJsonSchema: {
        type: 'object',
        properties: { recipe: { $ref: '#/$defs/recipe' } },
        required: ['recipe'],
        additionalProperties: false,
        $defs: { recipe: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
      },
    });
  });

  it('cleanSchema keeps properties that happen to be named like keywords', () => {
    expect(cleanSchema({ type: 'object', properties: { $schema: { type: 'string' }, items: { type: 'array', items: { $ref: '#/x', title: 't' } } } })).toEqual({
      type: 'object',
      properties: { $schema: { type: 'string' }, items: { type: 'array', items: { $ref: '#/x' } } },
    });
  });

  it('maps reasoning to thinkingConfig (budget from max_tokens or effort, includeThoughts unless excluded)', () => {
    expect(body({ reasoning: { max_tokens: 1234 } }).generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 1234, includeThoughts: true } });
    expect(toThinkingConfig({ effort: 'none' })).toEqual({ thinkingBudget: 0 });
    expect(toThinkingConfig({ effort: 'none', max_tokens: 100 })).toEqual({ thinkingBudget: 0 });
    expect(toThinkingConfig({ enabled: false })).toEqual({ thinkingBudget: 0 });
    expect(toThinkingConfig({ effort: 'minimal' })).toEqual({ thinkingBudget: 512, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'low' })).toEqual({ thinkingBudget: 2048, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'medium' })).toEqual({ thinkingBudget: 8192, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'high' })).toEqual({ thinkingBudget: 16384, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'xhigh' })).toEqual({ thinkingBudget: 24576, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'max' })).toEqual({ thinkingBudget: 32768, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'high', max_tokens: 3000 })).toEqual({ thinkingBudget: 3000, includeThoughts: true });
    expect(toThinkingConfig({ enabled: true })).toEqual({ thinkingBudget: -1, includeThoughts: true });
    expect(toThinkingConfig({ effort: 'medium', exclude: true })).toEqual({ thinkingBudget: 8192 });
    expect(toThinkingConfig({ summary: 'auto' })).toEqual({ includeThoughts: true });
    expect(toThinkingConfig({ exclude: true })).toBeUndefined();
    expect(toThinkingConfig(undefined)).toBeUndefined();
  });

  it('ignores fields Gemini has no equivalent for', () => {
    const b = body({ user: 'u1', parallel_tool_calls: false, messages: [{ role: 'user', name: 'bob', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] }] });
    expect(b).toEqual({ contents: [{ role: 'user', parts: [{ text: 'x' }] }] });
  });
});
