/**
 * The requests of the fidelity matrix, one protocol-neutral `Spec` written in each inbound API's own shape, and the
 * follow-up turn (the assistant's answer sent back with a tool result) in that shape too.
 *
 * Shapes follow the APIs' public documentation:
 * - chat: https://platform.openai.com/docs/api-reference/chat/create (image_url parts, tools, response_format
 *   json_schema), OpenRouter's `reasoning` object (https://openrouter.ai/docs/use-cases/reasoning-tokens);
 * - responses: https://platform.openai.com/docs/api-reference/responses/create (input_image, function tools,
 *   text.format json_schema, reasoning effort/summary, function_call_output);
 * - messages: https://docs.anthropic.com/en/api/messages (base64 image source, tools with input_schema, thinking,
 *   output_config.format, tool_result);
 * - gemini: the `@google/genai` SDK's parameters (https://ai.google.dev/api/generate-content: inlineData,
 *   functionDeclarations with parametersJsonSchema, responseMimeType + responseJsonSchema, thinkingConfig,
 *   functionResponse with the call's id).
 * The tool is the function-calling guide's `get_weather` (https://platform.openai.com/docs/guides/function-calling) and
 * the schema the structured-outputs guide's `calendar_event` (https://platform.openai.com/docs/guides/structured-outputs).
 */
import type { Api, Json } from './harness.js';
import { makePdf } from '../plugins/pdf.js';

export interface Spec {
  prompt: string;
  image?: boolean;
  /** A PDF document part (the API's own shape: chat `file`, `input_file`, `document`, Gemini `inlineData`). */
  pdf?: boolean;
  tools?: boolean;
  schema?: boolean;
  reasoning?: boolean;
  maxTokens?: number;
}

/** A 1×1 PNG. */
export const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
export const PNG_DATA_URL = `data:image/png;base64,${PNG_BASE64}`;

/** A one-page PDF. */
export const PDF_BASE64 = makePdf('The fidelity report says the answer is 42.').toString('base64');
export const PDF_DATA_URL = `data:application/pdf;base64,${PDF_BASE64}`;

/** The content of a first user turn: the prompt, and the image or PDF asked for, in each API's shape. */
function userContent(api: Exclude<Api, 'gemini'>, s: Spec): string | Json[] {
  if (!s.image && !s.pdf) return s.prompt;
  const text = api === 'responses' ? { type: 'input_text', text: s.prompt } : { type: 'text', text: s.prompt };
  const media: Record<typeof api, Json> = s.image
    ? {
        chat: { type: 'image_url', image_url: { url: PNG_DATA_URL } },
        responses: { type: 'input_image', image_url: PNG_DATA_URL, detail: 'auto' },
        messages: { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      }
    : {
        chat: { type: 'file', file: { filename: 'report.pdf', file_data: PDF_DATA_URL } },
        responses: { type: 'input_file', filename: 'report.pdf', file_data: PDF_DATA_URL },
        messages: { type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 } },
      };
  return [text, media[api]];
}

export const WEATHER = {
  name: 'get_weather',
  description: 'Get current temperature for a given location.',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' } },
    required: ['location'],
    additionalProperties: false,
  },
};

export const CALENDAR_EVENT = {
  type: 'object',
  properties: { name: { type: 'string' }, date: { type: 'string' }, participants: { type: 'array', items: { type: 'string' } } },
  required: ['name', 'date', 'participants'],
  additionalProperties: false,
};

/** The tool's answer, sent back in the second turn. */
export const TOOL_OUTPUT = '{"temperature_c": 14, "conditions": "light rain"}';

export function firstRequest(api: Api, model: string, s: Spec): Json {
  switch (api) {
    case 'chat': {
      const content = userContent(api, s);
      const b: Json = { model, messages: [{ role: 'user', content }] };
      if (s.tools) b.tools = [{ type: 'function', function: WEATHER }];
      if (s.schema) b.response_format = { type: 'json_schema', json_schema: { name: 'calendar_event', schema: CALENDAR_EVENT, strict: true } };
      if (s.reasoning) b.reasoning = { enabled: true, effort: 'low' };
      if (s.maxTokens) b.max_tokens = s.maxTokens;
      return b;
    }
    case 'responses': {
      const content = userContent(api, s);
      const b: Json = { model, input: [{ role: 'user', content }] };
      if (s.tools) b.tools = [{ type: 'function', ...WEATHER, strict: true }];
      if (s.schema) b.text = { format: { type: 'json_schema', name: 'calendar_event', schema: CALENDAR_EVENT, strict: true } };
      if (s.reasoning) b.reasoning = { effort: 'low', summary: 'auto' };
      if (s.maxTokens) b.max_output_tokens = s.maxTokens;
      return b;
    }
    case 'messages': {
      const content = userContent(api, s);
      const b: Json = { model, max_tokens: s.maxTokens ?? (s.reasoning ? 2048 : 1024), messages: [{ role: 'user', content }] };
      if (s.tools) b.tools = [{ name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters }];
      if (s.schema) b.output_config = { format: { type: 'json_schema', schema: CALENDAR_EVENT } };
      if (s.reasoning) b.thinking = { type: 'enabled', budget_tokens: 1024 };
      return b;
    }
    case 'gemini': {
      const parts: Json[] = [{ text: s.prompt }];
      if (s.image) parts.push({ inlineData: { mimeType: 'image/png', data: PNG_BASE64 } });
      if (s.pdf) parts.push({ inlineData: { mimeType: 'application/pdf', data: PDF_BASE64 } });
      const config: Json = {};
      if (s.tools) config.tools = [{ functionDeclarations: [{ name: WEATHER.name, description: WEATHER.description, parametersJsonSchema: WEATHER.parameters }] }];
      if (s.schema) Object.assign(config, { responseMimeType: 'application/json', responseJsonSchema: CALENDAR_EVENT });
      if (s.reasoning) config.thinkingConfig = { includeThoughts: true, thinkingLevel: 'LOW' };
      if (s.maxTokens) config.maxOutputTokens = s.maxTokens;
      return { model, contents: [{ role: 'user', parts }], config };
    }
  }
}

/** The next request: the conversation so far, the assistant's answer as the API returned it, and the tool result. */
export function followUp(api: Api, prev: Json, answer: Json, output: string): Json {
  switch (api) {
    case 'chat': {
      const m = answer.choices[0].message as Json;
      const assistant: Json = { role: 'assistant', content: m.content, tool_calls: m.tool_calls };
      if (m.reasoning_details) assistant.reasoning_details = m.reasoning_details;
      const results = (m.tool_calls as Json[]).map((tc) => ({ role: 'tool', tool_call_id: tc.id, content: output }));
      return { ...prev, messages: [...prev.messages, assistant, ...results] };
    }
    case 'responses': {
      const items = answer.output as Json[];
      const results = items.filter((i) => i.type === 'function_call').map((i) => ({ type: 'function_call_output', call_id: i.call_id, output }));
      return { ...prev, input: [...prev.input, ...items, ...results] };
    }
    case 'messages': {
      const blocks = answer.content as Json[];
      const results = blocks.filter((b) => b.type === 'tool_use').map((b) => ({ type: 'tool_result', tool_use_id: b.id, content: output }));
      return { ...prev, messages: [...prev.messages, { role: 'assistant', content: blocks }, { role: 'user', content: results }] };
    }
    case 'gemini': {
      const parts = answer.candidates[0].content.parts as Json[];
      const results = parts.filter((p) => p.functionCall).map((p) => ({ functionResponse: { id: p.functionCall.id, name: p.functionCall.name, response: { output } } }));
      return { ...prev, contents: [...prev.contents, { role: 'model', parts }, { role: 'user', parts: results }] };
    }
  }
}
