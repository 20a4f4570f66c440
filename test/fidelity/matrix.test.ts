/**
 * Fidelity matrix: every inbound API (chat completions, responses, messages, Gemini generateContent) × every upstream
 * protocol (OpenAI chat, Anthropic Messages, Google Gemini, OpenAI Responses, and Azure OpenAI's chat completions and
 * Responses on Azure's URLs and auth, Amazon Bedrock Converse signed with SigV4, Gemini and Anthropic on Google Vertex AI
 * with service-account tokens) × non-streaming / streaming × {text,
 * multi-turn tool round trip, image input, JSON-schema answer, reasoning, reasoning before a tool round trip
 * (signatures / encrypted reasoning replayed upstream), usage with cache and reasoning tokens, truncation}:
 * 4 × 9 × 2 × 8 = 576 cases.
 *
 * Clients are the official SDKs only (`openai`: chat.completions.create, responses.create; `@anthropic-ai/sdk`:
 * messages.create, messages.stream().finalMessage(); `@google/genai`: models.generateContent,
 * models.generateContentStream); streams also go through the SDKs' accumulators, so a malformed
 * event sequence fails the test. Each answer is compared with what the upstream actually produced, recorded by a tap
 * between gateway and simulator and read with parsers written from the providers' docs (harness.ts): same text,
 * reasoning (signatures and encrypted reasoning kept), tool call ids/names/arguments, finish reason (mapped to the
 * API's own value), token counts (cache reads/writes, reasoning), and the cost at the endpoint's price.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import {
  APIS,
  apiFinish,
  callChat,
  callMessages,
  callResponses,
  expectedCost,
  ROUTE,
  startFidelityEnv,
  upstreamObserved,
  UPSTREAMS,
  wireOf,
  type Api,
  type ClientResult,
  type Exchange,
  type FidelityEnv,
  type Json,
  type Observed,
  type Upstream,
} from './harness.js';
import { callGemini } from './gemini-client.js';
import { CALENDAR_EVENT, firstRequest, followUp, PDF_BASE64, PDF_DATA_URL, PNG_BASE64, PNG_DATA_URL, TOOL_OUTPUT, type Spec } from './requests.js';

let f: FidelityEnv;

beforeAll(async () => {
  f = await startFidelityEnv();
});
afterAll(async () => f?.close());
beforeEach(() => {
  f.env.sim.resetKnobs();
  f.env.sim.resetStats();
  f.tap.clear();
});

function call(api: Api, body: Json, stream: boolean): Promise<ClientResult> {
  if (api === 'chat') return callChat(f.openai, body, stream);
  if (api === 'responses') return callResponses(f.openai, body, stream);
  if (api === 'gemini') return callGemini(f.genai, body, stream);
  return callMessages(f.anthropic, body, stream);
}

/** One gateway call and the one upstream exchange it caused. */
async function turn(api: Api, up: Upstream, body: Json, stream: boolean): Promise<{ client: ClientResult; upstream: Observed; exchange: Exchange }> {
  f.tap.clear();
  const client = await call(api, body, stream);
  const exchange = f.tap.only();
  // Azure's URL shape: a deployment path (chat) or the resource-wide Responses path, with an api-version.
  if (up === 'azure-openai') expect(exchange.path).toBe('/sim-azure/openai/deployments/sim-azure-model/chat/completions?api-version=2024-10-21');
  if (up === 'azure-openai-responses') {
    expect(exchange.path).toBe('/sim-azure-responses/openai/responses?api-version=2025-04-01-preview');
    expect(exchange.request.model).toBe('sim-azure-responses-model');
  }
  // Vertex AI's URL shape: project, location, publisher; the Anthropic body without its model.
  if (up === 'vertex') expect(exchange.path).toMatch(/^\/sim-vertex\/v1\/projects\/sim-project\/locations\/us-east5\/publishers\/google\/models\/gemini-sim:(generateContent|streamGenerateContent\?alt=sse)$/);
  if (up === 'vertex-anthropic') {
    expect(exchange.path).toMatch(/^\/sim-vertex-anthropic\/v1\/projects\/sim-project\/locations\/us-east5\/publishers\/anthropic\/models\/claude-sim@20250929:(rawPredict|streamRawPredict)$/);
    expect(exchange.request).toMatchObject({ anthropic_version: 'vertex-2023-10-16' });
    expect(exchange.request.model).toBeUndefined();
  }
  return { client, upstream: upstreamObserved(up, exchange), exchange };
}

const strip = (calls: Observed['calls']) => calls.map((c) => ({ name: c.name, args: c.args }));

/** The client saw what the upstream produced. */
function expectFaithful(api: Api, up: Upstream, r: { client: ClientResult; upstream: Observed }): void {
  const c = r.client.observed;
  const p = r.upstream;
  expect(c.text).toBe(p.text);
  expect(c.reasoning).toBe(p.reasoning);
  // The upstream's signatures reach the client as they are; thinking no upstream signed carries the gateway's own
  // signature on the Messages API only (core/reasoning-signature.ts), so that Claude Code can send it back. There a
  // Google signature never leaves (Claude Code would send it on to Anthropic): its thinking is re-signed by the
  // gateway, and a signature alone (Gemini's on a function call) is left out.
  // On the Gemini API an Anthropic signature is tagged with its origin (`gateway-anthropic:`, inbound/gemini-output.ts).
  const own = c.signatures.filter((x) => x.startsWith('gwsig1.'));
  const foreign = api === 'messages' && (up === 'google' || up === 'vertex');
  if (api === 'gemini' && up === 'anthropic') for (const x of c.signatures) expect(x).toMatch(/^gateway-anthropic:/);
  const untagged = c.signatures.map((x) => (api === 'gemini' ? x.replace(/^gateway-anthropic:/, '') : x));
  expect(untagged.filter((x) => !x.startsWith('gwsig1.'))).toEqual(foreign ? [] : p.signatures);
  if (api !== 'messages') expect(own).toEqual([]);
  else expect(own.length).toBe(c.signatures.length - (foreign ? 0 : p.signatures.length));
  expect(c.encrypted).toEqual(p.encrypted);
  expect(strip(c.calls)).toEqual(strip(p.calls));
  // Call ids are the upstream's own where it gives one (Gemini calls carry none: the gateway names them).
  if (wireOf(up) !== 'google') expect(c.calls.map((x) => x.id)).toEqual(p.calls.map((x) => x.id));
  else for (const x of c.calls) expect(x.id).toMatch(/\S/);
  expect(c.finish).toBe(p.finish);
  expect(c.native).toBe(apiFinish(api, p.finish));
  expect(p.usage).not.toBeNull();
  // Gemini's usageMetadata has no cache-write count (such tokens are in promptTokenCount only).
  expect(c.usage).toEqual(api === 'gemini' ? { ...p.usage, cacheWrite: 0 } : p.usage);
  expect(r.client.cost).toBeCloseTo(expectedCost(p.usage!), 12);
}

const ajv = new Ajv({ strict: false });
const validEvent = ajv.compile(CALENDAR_EVENT);

type Feature = 'text' | 'tool round trip' | 'image input' | 'pdf input' | 'json schema' | 'reasoning' | 'reasoning + tool round trip' | 'usage' | 'truncation';
const FEATURES: Feature[] = ['text', 'tool round trip', 'image input', 'pdf input', 'json schema', 'reasoning', 'reasoning + tool round trip', 'usage', 'truncation'];

/** Knobs of the usage case: cache reads (all), cache writes (where the protocol reports them), reasoning tokens. */
const USAGE_KNOBS: Record<Upstream, Record<string, number>> = {
  openai: { cachedTokens: 5, reasoningTokens: 4, completionTokens: 9 },
  anthropic: { cachedTokens: 5, cacheWriteTokens: 3, completionTokens: 9 },
  google: { cachedTokens: 5, reasoningTokens: 4, completionTokens: 9 },
  'openai-responses': { cachedTokens: 5, cacheWriteTokens: 3, reasoningTokens: 4, completionTokens: 9 },
  'azure-openai': { cachedTokens: 5, reasoningTokens: 4, completionTokens: 9 },
  'azure-openai-responses': { cachedTokens: 5, cacheWriteTokens: 3, reasoningTokens: 4, completionTokens: 9 },
  bedrock: { cachedTokens: 5, cacheWriteTokens: 3, completionTokens: 9 },
  vertex: { cachedTokens: 5, reasoningTokens: 4, completionTokens: 9 },
  'vertex-anthropic': { cachedTokens: 5, cacheWriteTokens: 3, completionTokens: 9 },
};

const LONG_PROMPT = 'Summarize the plot of a short story about two cats who go on an adventure in a sunlit meadow near a quiet cottage.';

async function runFeature(api: Api, up: Upstream, stream: boolean, feature: Feature): Promise<void> {
  const model = ROUTE[up].model;
  const sim = ROUTE[up].sim;
  switch (feature) {
    case 'text': {
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'Say hello to the fidelity suite.' }), stream);
      expectFaithful(api, up, r);
      expect(r.upstream.text).toMatch(/^Simulated reply to: Say hello/);
      expect(r.upstream.finish).toBe('stop');
      return;
    }
    case 'tool round trip': {
      const spec: Spec = { prompt: 'What is the weather like in Paris today?', tools: true };
      const first = firstRequest(api, model, spec);
      const t1 = await turn(api, up, first, stream);
      expectFaithful(api, up, t1);
      expect(t1.upstream.finish).toBe('tool_calls');
      expect(strip(t1.upstream.calls)).toEqual([{ name: 'get_weather', args: { location: 'example' } }]);
      // The upstream got the tool in its own format.
      expectToolDeclared(up, t1.exchange.request);

      const second = followUp(api, first, t1.client.body, TOOL_OUTPUT);
      const t2 = await turn(api, up, second, stream);
      expectFaithful(api, up, t2);
      expect(t2.upstream.finish).toBe('stop');
      expect(t2.upstream.text).toMatch(/^Simulated reply using tool result:/);
      expect(t2.upstream.calls).toEqual([]);
      // The upstream got the call and its result back, in its own format, tied together.
      expectToolRoundTrip(up, t2.exchange.request, t1.upstream.calls[0]);
      return;
    }
    case 'image input': {
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'Describe this image.', image: true }), stream);
      expectFaithful(api, up, r);
      expectImage(up, f.env.sim.stats(sim).lastBody as Json);
      return;
    }
    case 'pdf input': {
      // The PDF reaches every upstream natively, in its own document shape (the fidelity models read files).
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'What does the report say?', pdf: true }), stream);
      expectFaithful(api, up, r);
      expectDocument(api, up, f.env.sim.stats(sim).lastBody as Json);
      return;
    }
    case 'json schema': {
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'Alice and Bob are going to a science fair on Friday.', schema: true }), stream);
      expectFaithful(api, up, r);
      const value = JSON.parse(r.client.observed.text) as unknown;
      expect(validEvent(value), JSON.stringify(validEvent.errors)).toBe(true);
      expectSchemaSent(up, r.exchange.request);
      return;
    }
    case 'reasoning': {
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'How many r letters are in strawberry?', reasoning: true }), stream);
      expectFaithful(api, up, r);
      // Reasoning was asked for in the upstream's terms, and came back.
      expect(r.upstream.reasoning.length).toBeGreaterThan(0);
      if (wireOf(up) === 'anthropic' || wireOf(up) === 'google' || wireOf(up) === 'bedrock') expect(r.upstream.signatures.length).toBeGreaterThan(0);
      return;
    }
    case 'reasoning + tool round trip': {
      // Reasoning before a tool call must reach the upstream again with the call (signed thinking, thought signatures,
      // encrypted reasoning), or the provider rejects / loses it.
      const first = firstRequest(api, model, { prompt: 'What is the weather like in Paris today?', tools: true, reasoning: true });
      const t1 = await turn(api, up, first, stream);
      expectFaithful(api, up, t1);
      expect(t1.upstream.finish).toBe('tool_calls');
      expect(t1.upstream.reasoning.length).toBeGreaterThan(0);
      const t2 = await turn(api, up, followUp(api, first, t1.client.body, TOOL_OUTPUT), stream);
      expectFaithful(api, up, t2);
      expect(t2.upstream.finish).toBe('stop');
      expectToolRoundTrip(up, t2.exchange.request, t1.upstream.calls[0]);
      expectReasoningReplayed(up, t2.exchange.request, t1.upstream);
      return;
    }
    case 'usage': {
      f.env.sim.setKnobs(sim, USAGE_KNOBS[up]);
      const r = await turn(api, up, firstRequest(api, model, { prompt: LONG_PROMPT }), stream);
      expectFaithful(api, up, r);
      const u = r.upstream.usage!;
      expect(u.cacheRead).toBe(5);
      if (wireOf(up) === 'anthropic' || wireOf(up) === 'openai-responses' || wireOf(up) === 'bedrock') expect(u.cacheWrite).toBe(3);
      // Anthropic and Converse do not report reasoning tokens apart.
      if (wireOf(up) !== 'anthropic' && wireOf(up) !== 'bedrock') expect(u.reasoning).toBe(4);
      expectApiUsage(api, r.client.body, u, stream);
      return;
    }
    case 'truncation': {
      const r = await turn(api, up, firstRequest(api, model, { prompt: 'Write a long poem about the sea.', maxTokens: 5 }), stream);
      expectFaithful(api, up, r);
      expect(r.upstream.finish).toBe('length');
      return;
    }
  }
}

// ---- upstream request checks (each protocol's documented request shape) ----

function expectToolDeclared(up: Upstream, req: Json): void {
  switch (wireOf(up)) {
    case 'openai':
      expect(req.tools).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'get_weather', parameters: expect.objectContaining({ required: ['location'] }) }) }]);
      return;
    case 'anthropic':
      expect(req.tools).toEqual([expect.objectContaining({ name: 'get_weather', input_schema: expect.objectContaining({ required: ['location'] }) })]);
      return;
    case 'google':
      expect(req.tools[0].functionDeclarations[0]).toMatchObject({ name: 'get_weather' });
      expect(req.tools[0].functionDeclarations[0].parametersJsonSchema ?? req.tools[0].functionDeclarations[0].parameters).toMatchObject({ required: ['location'] });
      return;
    case 'openai-responses':
      expect(req.tools).toEqual([expect.objectContaining({ type: 'function', name: 'get_weather', parameters: expect.objectContaining({ required: ['location'] }) })]);
      return;
    case 'bedrock':
      expect(req.toolConfig.tools).toEqual([{ toolSpec: expect.objectContaining({ name: 'get_weather', inputSchema: { json: expect.objectContaining({ required: ['location'] }) } }) }]);
      return;
  }
}

function expectToolRoundTrip(up: Upstream, req: Json, callMade: Observed['calls'][number]): void {
  switch (wireOf(up)) {
    case 'openai': {
      const msgs = req.messages as Json[];
      const a = msgs.find((m) => m.role === 'assistant')!;
      expect(a.tool_calls).toEqual([expect.objectContaining({ id: callMade.id, type: 'function', function: { name: 'get_weather', arguments: expect.any(String) } })]);
      expect(JSON.parse(a.tool_calls[0].function.arguments)).toEqual(callMade.args);
      expect(msgs[msgs.length - 1]).toEqual({ role: 'tool', tool_call_id: callMade.id, content: TOOL_OUTPUT });
      return;
    }
    case 'anthropic': {
      const msgs = req.messages as Json[];
      expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(msgs[1].content).toContainEqual(expect.objectContaining({ type: 'tool_use', id: callMade.id, name: 'get_weather', input: callMade.args }));
      expect(msgs[2].content).toEqual([expect.objectContaining({ type: 'tool_result', tool_use_id: callMade.id, content: TOOL_OUTPUT })]);
      return;
    }
    case 'google': {
      const contents = req.contents as Json[];
      expect(contents.map((c) => c.role)).toEqual(['user', 'model', 'user']);
      expect(contents[1].parts).toContainEqual(expect.objectContaining({ functionCall: { name: 'get_weather', args: callMade.args } }));
      expect(contents[2].parts).toEqual([{ functionResponse: { name: 'get_weather', response: expect.objectContaining({}) } }]);
      expect(JSON.stringify(contents[2].parts[0].functionResponse.response)).toContain('temperature_c');
      return;
    }
    case 'openai-responses': {
      const input = req.input as Json[];
      expect(input).toContainEqual(expect.objectContaining({ type: 'function_call', call_id: callMade.id, name: 'get_weather' }));
      expect(input[input.length - 1]).toEqual(expect.objectContaining({ type: 'function_call_output', call_id: callMade.id, output: TOOL_OUTPUT }));
      return;
    }
    case 'bedrock': {
      const msgs = req.messages as Json[];
      expect(msgs.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
      expect(msgs[1].content).toContainEqual({ toolUse: { toolUseId: callMade.id, name: 'get_weather', input: callMade.args } });
      expect(msgs[2].content).toEqual([{ toolResult: { toolUseId: callMade.id, content: [{ text: TOOL_OUTPUT }] } }]);
      expect(req.toolConfig.tools).toHaveLength(1);
      return;
    }
  }
}

function expectReasoningReplayed(up: Upstream, req: Json, before: Observed): void {
  switch (wireOf(up)) {
    case 'anthropic': {
      const assistant = (req.messages as Json[])[1];
      expect(assistant.content[0]).toEqual({ type: 'thinking', thinking: before.reasoning, signature: before.signatures[0] });
      return;
    }
    case 'google': {
      const call = ((req.contents as Json[])[1].parts as Json[]).find((p) => p.functionCall);
      expect(call?.thoughtSignature).toBe(before.signatures[0]);
      return;
    }
    case 'openai-responses': {
      const items = (req.input as Json[]).filter((i) => i.type === 'reasoning');
      expect(items.map((i) => i.encrypted_content).filter(Boolean)).toEqual(before.encrypted);
      return;
    }
    case 'bedrock': {
      const assistant = (req.messages as Json[])[1];
      expect(assistant.content[0]).toEqual({ reasoningContent: { reasoningText: { text: before.reasoning, signature: before.signatures[0] } } });
      return;
    }
    case 'openai':
      return; // reasoning_content is not sent back (https://api-docs.deepseek.com/guides/reasoning_model)
  }
}

function expectImage(up: Upstream, req: Json): void {
  switch (wireOf(up)) {
    case 'openai':
      expect(req.messages[req.messages.length - 1].content).toContainEqual({ type: 'image_url', image_url: expect.objectContaining({ url: PNG_DATA_URL }) });
      return;
    case 'anthropic':
      expect(req.messages[0].content).toContainEqual(expect.objectContaining({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }));
      return;
    case 'google':
      expect(req.contents[0].parts).toContainEqual({ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } });
      return;
    case 'openai-responses':
      expect(req.input[0].content).toContainEqual(expect.objectContaining({ type: 'input_image', image_url: PNG_DATA_URL }));
      return;
    case 'bedrock':
      expect(req.messages[0].content).toContainEqual({ image: { format: 'png', source: { bytes: PNG_BASE64 } } });
      return;
  }
}

function expectDocument(api: Api, up: Upstream, req: Json): void {
  // Gemini's inlineData has no file name; the other APIs name it report.pdf.
  const named = api !== 'gemini';
  switch (wireOf(up)) {
    case 'openai':
      expect(req.messages[req.messages.length - 1].content).toContainEqual({ type: 'file', file: { ...(named ? { filename: 'report.pdf' } : {}), file_data: PDF_DATA_URL } });
      return;
    case 'anthropic':
      expect(req.messages[0].content).toContainEqual({ type: 'document', ...(named ? { title: 'report.pdf' } : {}), source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } });
      return;
    case 'google':
      expect(req.contents[0].parts).toContainEqual({ inlineData: { mimeType: 'application/pdf', data: PDF_BASE64 } });
      return;
    case 'openai-responses':
      expect(req.input[0].content).toContainEqual({ type: 'input_file', ...(named ? { filename: 'report.pdf' } : {}), file_data: PDF_DATA_URL });
      return;
    case 'bedrock':
      expect(req.messages[0].content).toContainEqual({ document: { format: 'pdf', name: named ? 'report-pdf' : 'document', source: { bytes: PDF_BASE64 } } });
      return;
  }
}

function expectSchemaSent(up: Upstream, req: Json): void {
  switch (wireOf(up)) {
    case 'openai':
      expect(req.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema: CALENDAR_EVENT } });
      return;
    case 'anthropic':
      expect(req.output_config).toMatchObject({ format: { type: 'json_schema', schema: CALENDAR_EVENT } });
      return;
    case 'google':
      expect(req.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: CALENDAR_EVENT });
      return;
    case 'openai-responses':
      expect(req.text).toMatchObject({ format: { type: 'json_schema', schema: CALENDAR_EVENT } });
      return;
    case 'bedrock':
      expect(req.outputConfig.textFormat).toMatchObject({ type: 'json_schema', structure: { jsonSchema: { schema: expect.any(String) } } });
      expect(JSON.parse(req.outputConfig.textFormat.structure.jsonSchema.schema)).toEqual(CALENDAR_EVENT);
      return;
  }
}

/** The usage object in the API's own convention (the normalized comparison already ran). */
function expectApiUsage(api: Api, body: Json, u: NonNullable<Observed['usage']>, stream: boolean): void {
  if (api === 'chat') {
    expect(body.usage).toMatchObject({
      prompt_tokens: u.input,
      completion_tokens: u.output,
      total_tokens: u.input + u.output,
      prompt_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
      completion_tokens_details: { reasoning_tokens: u.reasoning },
    });
    expect(body.usage.cost).toBeGreaterThan(0);
  } else if (api === 'responses') {
    expect(body.usage).toMatchObject({
      input_tokens: u.input,
      input_tokens_details: { cached_tokens: u.cacheRead },
      output_tokens: u.output,
      output_tokens_details: { reasoning_tokens: u.reasoning },
      total_tokens: u.input + u.output,
    });
    expect(body.usage.cost).toBeGreaterThan(0);
  } else if (api === 'gemini') {
    // Gemini's convention: thoughts are counted apart from the candidates.
    expect(body.usageMetadata).toMatchObject({
      promptTokenCount: u.input,
      cachedContentTokenCount: u.cacheRead,
      candidatesTokenCount: u.output - u.reasoning,
      totalTokenCount: u.input + u.output,
      ...(u.reasoning > 0 ? { thoughtsTokenCount: u.reasoning } : {}),
    });
    expect(body.usageMetadata.cost).toBeGreaterThan(0);
  } else {
    // Anthropic's convention: input_tokens excludes cache reads and writes.
    expect(body.usage).toMatchObject({ input_tokens: u.input - u.cacheRead - u.cacheWrite, cache_read_input_tokens: u.cacheRead, cache_creation_input_tokens: u.cacheWrite, output_tokens: u.output });
    if (!stream) expect(body.usage.cost).toBeGreaterThan(0);
  }
}

// ---- the matrix ----

for (const api of APIS) {
  describe(`inbound ${api}`, () => {
    for (const up of UPSTREAMS) {
      describe(`→ ${up} upstream`, () => {
        for (const stream of [false, true]) {
          describe(stream ? 'streaming' : 'non-streaming', () => {
            for (const feature of FEATURES) it(feature, () => runFeature(api, up, stream, feature));
          });
        }
      });
    }
  });
}
