/**
 * Anthropic adapter, request building: every IR feature → the Messages request documented at
 * https://docs.anthropic.com/en/api/messages (system blocks with cache_control, alternating roles, tool_use /
 * tool_result, images, thinking blocks sent back with their signature, parameters, JSON output).
 */
import { describe, expect, it } from 'vitest';
import type { IrMessage } from '../../../src/core/ir.js';
import { anthropicAdapter, DEFAULT_MAX_TOKENS, EFFORT_BUDGET, JSON_TOOL_NAME } from '../../../src/providers/anthropic/index.js';
import { UpstreamError } from '../../../src/core/provider-errors.js';
import { body, ctx, irRequest } from './helpers.js';

const user = (text: string): IrMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): IrMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

const WEATHER = {
  name: 'get_weather',
  description: 'Get the current weather in a given location',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('URL and headers', () => {
  it('posts to {baseUrl}/messages with x-api-key, anthropic-version, content-type and provider headers', () => {
    const r = anthropicAdapter.buildRequest(
      irRequest({ stream: true }),
      ctx({ provider: { baseUrl: 'https://api.anthropic.com/v1/', headers: { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' } } }),
    );
    expect(r.url.href).toBe('https://api.anthropic.com/v1/messages');
    expect(r.headers['x-api-key']).toBe('sk-ant-test');
    expect(r.headers['anthropic-version']).toBe('2023-06-01');
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.headers.accept).toBe('text/event-stream');
    expect(r.headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14');
    expect(r.headers.authorization).toBeUndefined();
  });

  it('sends no x-api-key for providers without credentials', () => {
    const r = anthropicAdapter.buildRequest(irRequest(), ctx({ apiKey: null }));
    expect(r.headers['x-api-key']).toBeUndefined();
    expect(r.headers.accept).toBe('application/json');
  });
});

describe('system and messages', () => {
  it('sends the system as text blocks keeping cache_control, and omits an empty system', () => {
    const b = body({
      system: [
        { type: 'text', text: 'You are a contracts analyst.' },
        { type: 'text', text: '' },
        { type: 'text', text: '<the whole contract>', cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    });
    expect(b.system).toEqual([
      { type: 'text', text: 'You are a contracts analyst.' },
      { type: 'text', text: '<the whole contract>', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    expect(body()).not.toHaveProperty('system');
    expect(body({ system: [{ type: 'text', text: '' }] })).not.toHaveProperty('system');
  });

  it('merges consecutive same-role messages into strictly alternating turns', () => {
    const b = body({ messages: [user('a'), user('b'), assistant('c'), assistant('d'), user('e')] });
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'c' }, { type: 'text', text: 'd' }] },
      { role: 'user', content: [{ type: 'text', text: 'e' }] },
    ]);
  });

  it('drops empty text parts and messages left empty, keeps cache_control on message parts', () => {
    const b = body({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral' } }, { type: 'text', text: '' }] },
        { role: 'assistant', content: [{ type: 'text', text: '' }] },
        user('question'),
      ],
    });
    expect(b.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral' } }, { type: 'text', text: 'question' }] },
    ]);
  });

  it('trims trailing whitespace of a final assistant (prefill) message', () => {
    const b = body({ messages: [user('Say hi'), assistant('Here it is:  \n')] });
    expect(b.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Here it is:' }] });
    const only = body({ messages: [user('Say hi'), assistant('   ')] });
    expect(only.messages).toHaveLength(1);
  });

  it('replays a refusal as text and ignores message names', () => {
    const b = body({ messages: [user('x'), { role: 'assistant', name: 'bot', content: [{ type: 'refusal', text: 'I cannot help with that.' }] }, user('ok')] });
    expect(b.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'I cannot help with that.' }] });
  });
});

describe('tool round trip', () => {
  const history: IrMessage[] = [
    user('What is the weather in Paris and Rome?'),
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"location":"Paris"}' },
        { type: 'tool_call', id: 'toolu_2', name: 'get_weather', arguments: '{"location":"Rome"}', cache_control: { type: 'ephemeral' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'toolu_1', content: '15 degrees' }] },
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Also, be brief.' },
        {
          type: 'tool_result',
          tool_call_id: 'toolu_2',
          content: [
            { type: 'text', text: 'Rome: see chart' },
            { type: 'image', data: 'iVBORw0KGgoAAAA', media_type: 'image/png' },
          ],
          is_error: true,
          cache_control: { type: 'ephemeral' },
        },
      ],
    },
  ];

  it('sends tool_use blocks with parsed input and tool_result blocks first in the merged user turn', () => {
    const b = body({ messages: history, tools: [WEATHER] });
    expect(b.messages).toHaveLength(3);
    expect(b.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
        { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Rome' }, cache_control: { type: 'ephemeral' } },
      ],
    });
    expect(b.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '15 degrees' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_2',
          content: [
            { type: 'text', text: 'Rome: see chart' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAA' } },
          ],
          is_error: true,
          cache_control: { type: 'ephemeral' },
        },
        { type: 'text', text: 'Also, be brief.' },
      ],
    });
  });

  it('sends empty or invalid arguments as input {} and omits empty tool_result content', () => {
    const b = body({
      messages: [
        user('go'),
        {
          role: 'assistant',
          content: [
            { type: 'tool_call', id: 't1', name: 'now', arguments: '' },
            { type: 'tool_call', id: 't2', name: 'now', arguments: '{"broken": ' },
            { type: 'tool_call', id: 't3', name: 'now', arguments: '[1,2]' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: 't1', content: '' }] },
      ],
    });
    expect(b.messages[1].content.map((c: { input: unknown }) => c.input)).toEqual([{}, {}, {}]);
    expect(b.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 't1' }]);
  });

  it('maps tool definitions (input_schema, description, cache_control; an empty schema becomes an object schema)', () => {
    const b = body({
      tools: [
        { ...WEATHER, cache_control: { type: 'ephemeral' }, strict: true },
        { name: 'now', parameters: {} },
        { name: 'untyped', parameters: { properties: { a: { type: 'string' } } } },
      ],
    });
    expect(b.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Get the current weather in a given location',
        input_schema: WEATHER.parameters,
        cache_control: { type: 'ephemeral' },
      },
      { name: 'now', input_schema: { type: 'object', properties: {} } },
      { name: 'untyped', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
    ]);
    // strict is only sent to endpoints with structured outputs
    const s = body({ tools: [{ ...WEATHER, strict: true }] }, ctx({ endpoint: { supported_parameters: ['tools', 'structured_outputs'] } }));
    expect(s.tools[0].strict).toBe(true);
  });

  it('maps tool_choice and parallel_tool_calls', () => {
    const tools = [WEATHER];
    expect(body({ tools, tool_choice: { type: 'auto' } }).tool_choice).toEqual({ type: 'auto' });
    expect(body({ tools, tool_choice: { type: 'none' } }).tool_choice).toEqual({ type: 'none' });
    expect(body({ tools, tool_choice: { type: 'required' } }).tool_choice).toEqual({ type: 'any' });
    expect(body({ tools, tool_choice: { type: 'tool', name: 'get_weather' } }).tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(body({ tools }).tool_choice).toBeUndefined();
    expect(body({ tools, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(body({ tools, tool_choice: { type: 'required' }, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    expect(body({ tools, tool_choice: { type: 'none' }, parallel_tool_calls: false }).tool_choice).toEqual({ type: 'none' });
    // no tools: no tool_choice at all
    expect(body({ tool_choice: { type: 'required' }, parallel_tool_calls: false })).not.toHaveProperty('tool_choice');
  });

  it('rejects a caller tool named like the reserved JSON-output tool', () => {
    expect(() => body({ tools: [{ name: JSON_TOOL_NAME, parameters: {} }] })).toThrow(UpstreamError);
    try {
      body({ tools: [{ name: JSON_TOOL_NAME, parameters: {} }] });
    } catch (e) {
      expect((e as UpstreamError).status).toBe(400);
    }
  });
});

describe('images', () => {
  const img = (p: object) => body({ messages: [{ role: 'user', content: [{ type: 'image', ...p }, { type: 'text', text: 'What is this?' }] }] }).messages[0].content[0];

  it('sends inline data as a base64 source (media type given or sniffed)', () => {
    expect(img({ data: 'R0lGODlhAQABAAAAACw=', media_type: 'image/gif' })).toEqual({
      type: 'image',
      source: { type: 'base64', media_type: 'image/gif', data: 'R0lGODlhAQABAAAAACw=' },
    });
    expect(img({ data: '/9j/4AAQSkZJRg' }).source.media_type).toBe('image/jpeg');
    expect(img({ data: 'UklGRiQAAABXRUJQ' }).source.media_type).toBe('image/webp');
  });

  it('sends an http(s) URL as a url source and keeps cache_control', () => {
    expect(img({ url: 'https://upload.wikimedia.org/cat.jpg', detail: 'high', cache_control: { type: 'ephemeral' } })).toEqual({
      type: 'image',
      source: { type: 'url', url: 'https://upload.wikimedia.org/cat.jpg' },
      cache_control: { type: 'ephemeral' },
    });
  });

  it('decodes data: URLs into a base64 source', () => {
    expect(img({ url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==' }).source).toEqual({
      type: 'base64',
      media_type: 'image/png',
      data: 'iVBORw0KGgoAAAANSUhEUg==',
    });
    // not base64-encoded: percent-decoded then base64-encoded
    const svg = img({ url: 'data:image/svg+xml,%3Csvg%2F%3E' }).source;
    expect(svg.media_type).toBe('image/svg+xml');
    expect(Buffer.from(svg.data, 'base64').toString()).toBe('<svg/>');
  });

  it('rejects a broken data URL with 400', () => {
    expect(() => img({ url: 'data:image/png;base64' })).toThrow(UpstreamError);
  });
});

describe('reasoning sent back', () => {
  it('sends reasoning with a signature as thinking blocks and redacted reasoning as redacted_thinking, in order', () => {
    const b = body({
      messages: [
        user('What is 27 * 453?'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'Let me solve this step by step...', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' },
            { type: 'redacted_reasoning', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP...' },
            { type: 'tool_call', id: 'toolu_9', name: 'calc', arguments: '{"expr":"27*453"}' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_call_id: 'toolu_9', content: '12231' }] },
      ],
    });
    expect(b.messages[1].content).toEqual([
      { type: 'thinking', thinking: 'Let me solve this step by step...', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds...' },
      { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP...' },
      { type: 'tool_use', id: 'toolu_9', name: 'calc', input: { expr: '27*453' } },
    ]);
  });

  it('drops reasoning that cannot be replayed (no signature, or a summary)', () => {
    const b = body({
      messages: [
        user('q'),
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'from another provider' },
            { type: 'reasoning', text: 'a summary', signature: 'sig', summary: true },
            { type: 'text', text: 'answer' },
          ],
        },
        user('next'),
      ],
    });
    expect(b.messages[1].content).toEqual([{ type: 'text', text: 'answer' }]);
  });
});

describe('parameters', () => {
  it('maps sampling parameters, stop sequences, user and stream; ignores what Anthropic lacks', () => {
    const b = body({
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop: ['\n\nHuman:', 'END'],
      user: 'user-1234',
      stream: true,
      seed: 7,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      max_tokens: 512,
    });
    expect(b).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 512,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
      temperature: 0.3,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ['\n\nHuman:', 'END'],
      metadata: { user_id: 'user-1234' },
      stream: true,
    });
  });

  it('clamps temperature to Anthropic range 0..1', () => {
    expect(body({ temperature: 1.7 }).temperature).toBe(1);
    expect(body({ temperature: 0 }).temperature).toBe(0);
  });

  it('defaults max_tokens (required by Anthropic) to the endpoint limit, else 4096', () => {
    expect(body().max_tokens).toBe(DEFAULT_MAX_TOKENS);
    expect(DEFAULT_MAX_TOKENS).toBe(4096);
    expect(body({}, ctx({ endpoint: { max_completion_tokens: 64000 } })).max_tokens).toBe(64000);
    expect(body({ max_tokens: 100 }, ctx({ endpoint: { max_completion_tokens: 64000 } })).max_tokens).toBe(100);
  });
});

describe('thinking', () => {
  it('maps effort to budget_tokens', () => {
    for (const [effort, budget] of Object.entries(EFFORT_BUDGET)) {
      const b = body({ reasoning: { effort: effort as keyof typeof EFFORT_BUDGET }, max_tokens: 100000 });
      expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
    }
    expect(EFFORT_BUDGET).toMatchObject({ minimal: 1024, low: 2048, medium: 4096, high: 16384 });
  });

  it('uses an explicit reasoning max_tokens (at least 1024), and medium for a bare enabled: true', () => {
    expect(body({ reasoning: { max_tokens: 3000 }, max_tokens: 8000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 3000 });
    expect(body({ reasoning: { max_tokens: 200 }, max_tokens: 8000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(body({ reasoning: { enabled: true }, max_tokens: 8000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
  });

  it('sends no thinking for effort none, enabled false, or no reasoning config', () => {
    expect(body({ reasoning: { effort: 'none' } })).not.toHaveProperty('thinking');
    expect(body({ reasoning: { enabled: false, max_tokens: 5000 } })).not.toHaveProperty('thinking');
    expect(body({ reasoning: { exclude: true } })).not.toHaveProperty('thinking');
    expect(body()).not.toHaveProperty('thinking');
  });

  it('keeps the budget below max_tokens, and drops thinking when that leaves less than 1024', () => {
    expect(body({ reasoning: { effort: 'high' }, max_tokens: 8000 }).thinking).toEqual({ type: 'enabled', budget_tokens: 7999 });
    const small = body({ reasoning: { effort: 'high' }, max_tokens: 1000, temperature: 0.2 });
    expect(small).not.toHaveProperty('thinking');
    expect(small.temperature).toBe(0.2);
  });

  it('raises a defaulted max_tokens above the budget, or fits the budget under the endpoint limit', () => {
    const b = body({ reasoning: { effort: 'high' } });
    expect(b.thinking.budget_tokens).toBe(16384);
    expect(b.max_tokens).toBe(16384 + DEFAULT_MAX_TOKENS);
    const e = body({ reasoning: { effort: 'max' } }, ctx({ endpoint: { max_completion_tokens: 64000 } }));
    expect(e.max_tokens).toBe(64000);
    expect(e.thinking.budget_tokens).toBe(63999);
  });

  it('drops thinking when the caller forces a tool (Anthropic rejects forced tool use with thinking)', () => {
    const b = body({ reasoning: { effort: 'high' }, tools: [WEATHER], tool_choice: { type: 'tool', name: 'get_weather' }, temperature: 0.5 });
    expect(b).not.toHaveProperty('thinking');
    expect(b.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(b.temperature).toBe(0.5);
    expect(body({ reasoning: { effort: 'high' }, tools: [WEATHER], tool_choice: { type: 'required' } })).not.toHaveProperty('thinking');
    expect(body({ reasoning: { effort: 'low' }, max_tokens: 4000, tools: [WEATHER], tool_choice: { type: 'auto' } }).thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
  });

  it('drops temperature and top_k with thinking, keeps top_p only from 0.95', () => {
    const b = body({ reasoning: { effort: 'low' }, max_tokens: 4000, temperature: 0.2, top_k: 5, top_p: 0.9 });
    expect(b.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(b).not.toHaveProperty('temperature');
    expect(b).not.toHaveProperty('top_k');
    expect(b).not.toHaveProperty('top_p');
    expect(body({ reasoning: { effort: 'low' }, max_tokens: 4000, top_p: 0.97 }).top_p).toBe(0.97);
  });
});

describe('JSON output', () => {
  const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
  const jsonSchema = { type: 'json_schema' as const, name: 'person', schema, strict: true };

  it('forces the json_output tool carrying the schema when the endpoint has no structured outputs', () => {
    const b = body({ response_format: jsonSchema });
    expect(b.tools).toEqual([
      { name: JSON_TOOL_NAME, description: 'Return the final answer as a JSON object "person". Call this tool exactly once, with the whole answer.', input_schema: schema },
    ]);
    expect(b.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
    expect(b).not.toHaveProperty('output_config');
  });

  it('uses output_config.format on endpoints with structured outputs', () => {
    const b = body({ response_format: jsonSchema }, ctx({ endpoint: { supported_parameters: ['structured_outputs'] } }));
    expect(b.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(b).not.toHaveProperty('tools');
    expect(b).not.toHaveProperty('tool_choice');
  });

  it('json_object uses the tool with a free object schema; text needs nothing', () => {
    const b = body({ response_format: { type: 'json_object' } }, ctx({ endpoint: { supported_parameters: ['structured_outputs'] } }));
    expect(b.tools[0].input_schema).toEqual({ type: 'object' });
    expect(b.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
    expect(body({ response_format: { type: 'text' } })).not.toHaveProperty('tools');
  });

  it('with caller tools: any tool (auto), no JSON tool when the caller forces one', () => {
    const auto = body({ response_format: jsonSchema, tools: [WEATHER] });
    expect(auto.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather', JSON_TOOL_NAME]);
    expect(auto.tool_choice).toEqual({ type: 'any' });
    const none = body({ response_format: jsonSchema, tools: [WEATHER], tool_choice: { type: 'none' } });
    expect(none.tool_choice).toEqual({ type: 'tool', name: JSON_TOOL_NAME });
    const forced = body({ response_format: jsonSchema, tools: [WEATHER], tool_choice: { type: 'required' } });
    expect(forced.tools.map((t: { name: string }) => t.name)).toEqual(['get_weather']);
    expect(forced.tool_choice).toEqual({ type: 'any' });
  });

  it('with thinking: tool_choice auto (Anthropic rejects forced tools with thinking) and a system instruction', () => {
    const b = body({ response_format: jsonSchema, reasoning: { effort: 'low' }, max_tokens: 8000, system: [{ type: 'text', text: 'Be exact.' }] });
    expect(b.tool_choice).toEqual({ type: 'auto' });
    expect(b.system).toEqual([
      { type: 'text', text: 'Be exact.' },
      { type: 'text', text: `Give your final answer by calling the ${JSON_TOOL_NAME} tool with it.` },
    ]);
  });
});
