/**
 * Amazon Bedrock Converse (providers/bedrock/): the IR → Converse request, answers and the binary event stream back
 * to the IR, Bedrock's errors, and SigV4 — signed by AWS's signer, checked by the simulator's own verifier
 * (src/sim/sigv4.ts, written from the specification).
 */
import { describe, expect, it } from 'vitest';
import type { EndpointDef, ProviderDef } from '../../../src/core/catalog-types.js';
import type { IrRequest, IrStreamEvent } from '../../../src/core/ir.js';
import { bedrockAdapter, EVENT_STREAM, parseAwsCredentials } from '../../../src/providers/bedrock/index.js';
import { bedrockError } from '../../../src/providers/bedrock/errors.js';
import { keyProblem } from '../../../src/providers/registry.js';
import { frameEvent } from '../../../src/sim/bedrock.js';
import { verifySigV4 } from '../../../src/sim/sigv4.js';

const provider = (cloud: Record<string, string> = { region: 'us-east-1' }): ProviderDef => ({ slug: 'bedrock', name: 'Bedrock', protocol: 'bedrock', baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', dataPolicy: { training: false, retainsPrompts: false, zdr: true }, cloud });
const endpoint = { model: 'anthropic/claude', provider: 'bedrock', tag: 'bedrock', upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', pricing: null, context_length: 200000, max_prompt_tokens: null, max_completion_tokens: 8192, quantization: 'unknown', supported_parameters: [], is_moderated: false, supports_implicit_caching: false } as EndpointDef;
const KEY = 'AKIDSIMUNIT:simsecret/AKIDSIMUNIT';
const base = (over: Partial<IrRequest> = {}): IrRequest => ({ model: 'm', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, ...over });
const build = (req: IrRequest) => bedrockAdapter.buildRequest(req, { provider: provider(), endpoint, apiKey: KEY });

describe('Converse request', () => {
  it('maps system, messages, inference config, tools, tool choice, JSON schema, cache points and reasoning', () => {
    const r = build(
      base({
        max_tokens: 100,
        temperature: 0.5,
        stop: ['END'],
        tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }],
        tool_choice: { type: 'tool', name: 'get_weather' },
        response_format: { type: 'json_schema', name: 'ev', schema: { type: 'object' } },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?', cache_control: { type: 'ephemeral' } }, { type: 'image', url: 'data:image/jpeg;base64,/9j/AAAA' }] },
          { role: 'assistant', content: [{ type: 'reasoning', text: 'think', signature: 'sig' }, { type: 'tool_call', id: 't1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'user', content: [{ type: 'tool_result', tool_call_id: 't1', content: 'sunny', is_error: true }] },
          { role: 'user', content: [{ type: 'text', text: 'and tomorrow?' }] },
        ],
      }),
    );
    expect(r.url.toString()).toBe('https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
    const b = JSON.parse(r.body);
    expect(b.system).toEqual([{ text: 'Be brief.' }]);
    expect(b.inferenceConfig).toEqual({ maxTokens: 100, temperature: 0.5, stopSequences: ['END'] });
    expect(b.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather?' }, { cachePoint: { type: 'default' } }, { image: { format: 'jpeg', source: { bytes: '/9j/AAAA' } } }] },
      { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'think', signature: 'sig' } } }, { toolUse: { toolUseId: 't1', name: 'get_weather', input: { city: 'Paris' } } }] },
      // Consecutive user turns merged: Converse wants alternating roles.
      { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'sunny' }], status: 'error' } }, { text: 'and tomorrow?' }] },
    ]);
    expect(b.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }], toolChoice: { tool: { name: 'get_weather' } } });
    expect(b.outputConfig).toEqual({ textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: '{"type":"object"}', name: 'ev' } } } });
  });

  it('reasoning: Anthropic thinking with a budget below maxTokens; Nova reasoningConfig; streaming URL', () => {
    const r = JSON.parse(build(base({ reasoning: { effort: 'low' } })).body);
    expect(r.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(r.inferenceConfig.maxTokens).toBeGreaterThan(2048);
    const nova = bedrockAdapter.buildRequest(base({ reasoning: { effort: 'high' }, stream: true }), { provider: provider(), endpoint: { ...endpoint, upstreamModel: 'amazon.nova-2-lite-v1:0' }, apiKey: KEY });
    expect(JSON.parse(nova.body).additionalModelRequestFields).toEqual({ reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' } });
    expect(nova.url.pathname).toBe('/model/amazon.nova-2-lite-v1%3A0/converse-stream');
  });

  it('refuses images by URL (Converse takes bytes only) with a 400', () => {
    expect(() => build(base({ messages: [{ role: 'user', content: [{ type: 'image', url: 'https://example.com/a.png' }] }] }))).toThrow(/inline only/);
  });
});

describe('Converse answers', () => {
  it('parses text, tool use, reasoning and usage (cache included in input)', () => {
    const res = bedrockAdapter.parseResponse(
      JSON.stringify({
        output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hmm', signature: 's1' } } }, { text: 'Calling.' }, { toolUse: { toolUseId: 'tu1', name: 'f', input: { a: 1 } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 22, cacheReadInputTokens: 4, cacheWriteInputTokens: 3 },
      }),
    );
    expect(res.content).toEqual([{ type: 'reasoning', text: 'hmm', signature: 's1' }, { type: 'text', text: 'Calling.' }, { type: 'tool_call', id: 'tu1', name: 'f', arguments: '{"a":1}' }]);
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.usage).toEqual({ input: 17, output: 5, cache_read: 4, cache_write: 3, reasoning: 0 });
    expect(() => bedrockAdapter.parseResponse('{"output":{}}')).toThrow(/invalid answer/);
  });

  it('decodes the binary event stream split at any boundary; an exception message is an error event', () => {
    const frames = [
      frameEvent({ event: 'messageStart', data: '{"role":"assistant","p":"abc"}' }),
      frameEvent({ event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Hel"}}' }),
      frameEvent({ event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"lo ✓"}}' }),
      frameEvent({ event: 'contentBlockStop', data: '{"contentBlockIndex":0}' }),
      frameEvent({ event: 'contentBlockStart', data: '{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tu","name":"f"}}}' }),
      frameEvent({ event: 'contentBlockDelta', data: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\\"a\\":"}}}' }),
      frameEvent({ event: 'contentBlockDelta', data: '{"contentBlockIndex":1,"delta":{"toolUse":{"input":"1}"}}}' }),
      frameEvent({ event: 'contentBlockStop', data: '{"contentBlockIndex":1}' }),
      frameEvent({ event: 'messageStop', data: '{"stopReason":"tool_use"}' }),
      frameEvent({ event: 'metadata', data: '{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}' }),
    ];
    const all = Buffer.concat(frames.map((f) => Buffer.from(f)));
    for (const seed of [1, 7, 13, 29]) {
      const d = bedrockAdapter.createStreamDecoder();
      const events: IrStreamEvent[] = [];
      let at = 0;
      let n = seed;
      while (at < all.length) {
        n = (n * 1103515245 + 12345) % 2147483648;
        const size = 1 + (n % 23);
        events.push(...d.pushBytes!(all.subarray(at, at + size)));
        at += size;
      }
      events.push(...d.end());
      expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as { text: string }).text).join('')).toBe('Hello ✓');
      expect(events).toContainEqual({ type: 'tool_call_start', index: 1, id: 'tu', name: 'f' });
      expect(events.filter((e) => e.type === 'tool_call_delta').map((e) => (e as { arguments: string }).arguments).join('')).toBe('{"a":1}');
      expect(events).toContainEqual({ type: 'finish', finish_reason: 'tool_calls', native_finish_reason: 'tool_use' });
      expect(events.at(-1)).toEqual({ type: 'usage', usage: { input: 3, output: 4, cache_read: 0, cache_write: 0, reasoning: 0 } });
    }
    const cut = bedrockAdapter.createStreamDecoder();
    cut.pushBytes!(Buffer.concat(frames.slice(0, 3).map((f) => Buffer.from(f))));
    expect(() => cut.end()).toThrow(/ended before completion/);
    const failing = bedrockAdapter.createStreamDecoder();
    const ev = failing.pushBytes!(Buffer.from(frameEvent({ event: 'exception:throttlingException', data: '{"message":"Too many requests"}' })));
    expect(ev).toEqual([{ type: 'error', status: 429, message: 'Too many requests', error_type: 'rate_limit_exceeded', raw: { message: 'Too many requests' } }]);
    const corrupt = Buffer.from(frames[1]);
    corrupt[corrupt.length - 6] ^= 0xff;
    expect(() => bedrockAdapter.createStreamDecoder().pushBytes!(corrupt)).toThrow(/invalid event stream/);
    expect(EVENT_STREAM).toBeDefined();
  });

  it("maps Bedrock's errors by status and x-amzn-errortype", () => {
    const e = (status: number, type: string, message: string) => bedrockError(status, JSON.stringify({ message }), { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
    expect(e(400, 'ValidationException', 'Input is too long for requested model.')).toMatchObject({ status: 400, type: 'context_length_exceeded' });
    expect(e(400, 'ValidationException', 'Malformed input request')).toMatchObject({ status: 400, type: 'invalid_request' });
    expect(e(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.')).toMatchObject({ status: 502, type: 'authentication' });
    expect(e(429, 'ThrottlingException', 'Too many requests, please wait before trying again.')).toMatchObject({ status: 429, type: 'rate_limit_exceeded' });
    expect(e(503, 'ServiceUnavailableException', 'unavailable')).toMatchObject({ status: 502, type: 'provider_unavailable' });
  });
});

describe('credentials and SigV4', () => {
  it('reads key pairs as text or JSON, and says what is wrong with others', () => {
    expect(parseAwsCredentials('AKID:SECRET')).toEqual({ accessKeyId: 'AKID', secretAccessKey: 'SECRET' });
    expect(parseAwsCredentials('AKID:SECRET:TOKEN')).toEqual({ accessKeyId: 'AKID', secretAccessKey: 'SECRET', sessionToken: 'TOKEN' });
    expect(parseAwsCredentials('{"access_key_id":"A","secret_access_key":"S","region":"eu-west-1"}')).toEqual({ accessKeyId: 'A', secretAccessKey: 'S', region: 'eu-west-1' });
    expect(keyProblem(provider(), 'just-a-string')).toMatch(/ACCESS_KEY_ID:SECRET_ACCESS_KEY/);
    expect(keyProblem(provider(), '{"access_key_id":"A"}')).toMatch(/needs access_key_id and secret_access_key/);
    expect(keyProblem(provider(), '{"access_key_id":"A","secret_access_key":"S","region":"mars"}')).toMatch(/AWS region/);
    expect(keyProblem(provider({ region: 'us-east-1', auth: 'api-key' }), 'ABSKbedrockapikey')).toBeNull();
  });

  it("AWS's signer signs what the simulator's own verifier accepts; a wrong secret, a changed body or an old date do not pass", async () => {
    const req = build(base());
    const signed = await bedrockAdapter.authorize!(req, { provider: provider(), endpoint, apiKey: KEY });
    const headers = { ...signed.headers, host: signed.url.host };
    const check = (h: Record<string, string>, body = signed.body, now?: number) => verifySigV4({ method: 'POST', path: signed.url.pathname, query: '', headers: h, body }, 'bedrock', now);
    expect(signed.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDSIMUNIT\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/);
    expect(check(headers)).toBeNull();
    expect(check(headers, signed.body.replace('Hi', 'Ho'))).toMatchObject({ type: expect.stringMatching(/InvalidSignatureException|XAmzContentSHA256Mismatch/) });
    expect(check(headers, signed.body, Date.now() + 20 * 60_000)).toMatchObject({ type: 'InvalidSignatureException', message: expect.stringContaining('Signature expired') });
    const wrong = await bedrockAdapter.authorize!(req, { provider: provider(), endpoint, apiKey: 'AKIDSIMUNIT:not-the-secret' });
    expect(check({ ...wrong.headers, host: wrong.url.host })).toMatchObject({ status: 403, type: 'InvalidSignatureException' });
    const unknown = await bedrockAdapter.authorize!(req, { provider: provider(), endpoint, apiKey: 'AKIAREAL:secret' });
    expect(check({ ...unknown.headers, host: unknown.url.host })).toMatchObject({ type: 'UnrecognizedClientException' });
    // A session token is signed too; a Bedrock API key is a bearer token.
    const session = await bedrockAdapter.authorize!(req, { provider: provider(), endpoint, apiKey: `${KEY}:session-token-1` });
    expect(session.headers['x-amz-security-token']).toBe('session-token-1');
    expect(check({ ...session.headers, host: session.url.host })).toBeNull();
    const bearer = await bedrockAdapter.authorize!(req, { provider: provider({ region: 'us-east-1', auth: 'api-key' }), endpoint, apiKey: 'ABSKkey' });
    expect(bearer.headers.authorization).toBe('Bearer ABSKkey');
  });

  it("a credential of another region moves the request to that region's runtime host", async () => {
    const signed = await bedrockAdapter.authorize!(build(base()), { provider: provider(), endpoint, apiKey: '{"access_key_id":"AKIDSIMX","secret_access_key":"simsecret/AKIDSIMX","region":"eu-central-1"}' });
    expect(signed.url.hostname).toBe('bedrock-runtime.eu-central-1.amazonaws.com');
    expect(signed.headers.authorization).toContain('/eu-central-1/bedrock/aws4_request');
  });
});
