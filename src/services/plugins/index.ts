/**
 * The request plugins as steps of request preparation and of the reply (docs/plugins.md; settings: core/plugins.ts):
 *   input:   file inputs and file-parser (./file-inputs.ts), then context-compression middle-out (core/middle-out.ts)
 *   before the call: moderation (./moderation.ts)
 *   reply:   response-healing (./healing.ts; streams: StreamHealer, run by the attempt's stream codec)
 * `web` is the web search server tool: withWebPlugin adds it to the request's tools before the server-tool check.
 */
import type { EndpointDef, ModelDef } from '../../core/catalog-types.js';
import { dropOrphanToolMessages, middleOut } from '../../core/middle-out.js';
import { pluginSettings, type PluginPipelineEntry, type PluginSettings } from '../../core/plugins.js';
import type { CatalogService } from '../catalog.js';
import { FileInputs, hasFileParts } from './file-inputs.js';
import { healReply, jsonFormat, StreamHealer } from './healing.js';
import type { Moderation } from './moderation.js';

type Obj = Record<string, unknown>;

export class PluginSteps {
  constructor(private readonly deps: { catalog: CatalogService; fileInputs: FileInputs | null; moderation: Moderation; now: () => number }) {}

  settings(body: Obj): PluginSettings {
    return pluginSettings(body.plugins);
  }

  /** Whether `input` has anything to do (a synchronous check: most requests have no file part and no middle-out). */
  needsInput(api: string, body: Obj, plugins: PluginSettings): boolean {
    return plugins.middleOut || (this.deps.fileInputs !== null && hasFileParts(api, body));
  }

  /** File inputs (with file-parser) and middle-out, on the body before content screening and routing. */
  async input(api: string, input: Obj, ctx: { workspaceId: string; models: string[]; plugins: PluginSettings; maxTokens: number | null }): Promise<{ body: Obj; pipeline: PluginPipelineEntry[] }> {
    let body = input;
    const pipeline: PluginPipelineEntry[] = [];
    if (this.deps.fileInputs && hasFileParts(api, body)) {
      const r = await this.deps.fileInputs.apply(api, body, { workspaceId: ctx.workspaceId, parser: ctx.plugins.fileParser, modelsReadFiles: this.readFiles(ctx.models) });
      body = r.body;
      pipeline.push(...r.pipeline);
    }
    if (ctx.plugins.middleOut) {
      const entry = this.compress(api, body, ctx.models, ctx.maxTokens);
      if (entry) {
        body = entry.body;
        pipeline.push(entry.entry);
      }
    }
    return { body, pipeline };
  }

  moderate(api: string, body: Obj): Promise<PluginPipelineEntry> {
    return this.deps.moderation.check(api, body, this.deps.now);
  }

  /** response-healing on a non-streamed reply (in place). */
  heal(api: string, request: Obj, reply: Obj): PluginPipelineEntry | null {
    return healReply(api, request, reply);
  }

  /** response-healing on a streamed reply: a healer per attempt's stream, or null when the request asks for no JSON. */
  streamHealing(api: string, request: Obj): (() => StreamHealer) | null {
    const format = jsonFormat(api, request);
    return format ? () => new StreamHealer(format) : null;
  }

  private models(ids: string[]): Array<{ model: ModelDef | undefined; endpoints: EndpointDef[] }> {
    const route = this.deps.catalog.route;
    return ids.map((id) => ({ model: route.models.get(id), endpoints: route.endpointsByModel.get(id) ?? [] }));
  }

  /**
   * Every requested model reads files (the catalog's input modalities include `file`). Every upstream protocol
   * carries documents — as sent when it is the client's own, else through the IR's document part in its own shape.
   */
  private readFiles(ids: string[]): boolean {
    return this.models(ids).every(({ model }) => model?.architecture.input_modalities.includes('file') === true);
  }

  private compress(api: string, body: Obj, ids: string[], maxTokens: number | null): { body: Obj; entry: PluginPipelineEntry } | null {
    const key = api === 'responses' ? 'input' : api === 'gemini' ? 'contents' : 'messages';
    const list = body[key];
    if (!Array.isArray(list) || list.length < 3) return null;
    const contexts = this.models(ids).flatMap(({ model, endpoints }) => endpoints.map((e) => (e.context_length > 0 ? e.context_length : (model?.context_length ?? 0))).filter((c) => c > 0));
    if (contexts.length === 0) return null;
    const context = Math.min(...contexts);
    const budget = context - (maxTokens ?? 0);
    const overhead = Math.ceil(JSON.stringify({ ...body, [key]: [] }).length / 4);
    const r = middleOut(list, budget, overhead);
    if (r.removed === 0) return null;
    const messages = api === 'chat' ? dropOrphanToolMessages(r.messages) : r.messages;
    return {
      body: { ...body, [key]: messages },
      entry: {
        type: 'context_compression',
        name: 'middle-out',
        summary: `Removed ${list.length - messages.length} of ${list.length} messages from the middle to fit the ${context}-token context`,
        data: { engine: 'middle-out', messages_before: list.length, messages_after: messages.length, estimated_tokens_before: r.tokensBefore, estimated_tokens_after: r.tokensAfter, context_length: context },
      },
    };
  }
}

/** The `web` plugin: the web search server tool added to the request's tools (unless it already has one). */
export function withWebPlugin(body: Obj): Obj {
  const web = pluginSettings(body.plugins).web;
  if (!web) return body;
  const tools = Array.isArray(body.tools) ? (body.tools as Obj[]) : [];
  if (tools.some((t) => typeof t?.type === 'string' && /web_search/.test(t.type))) return body;
  return { ...body, tools: [...tools, { type: 'gateway:web_search', ...(Object.keys(web).length > 0 ? { parameters: web } : {}) }] };
}
