/**
 * The hosted router's request plugins (docs/plugins.md): `plugins: [{id, enabled?, …}]` read into settings, each
 * checked with an error naming its field. Pure. The steps that apply them live in services/plugins/.
 *   file-parser          PDFs: `pdf.engine` native (the upstream reads the PDF) | text (text extracted here; the
 *                        reference's `pdf-text` and `cloudflare-ai` mean this too); default: native when the model reads
 *                        files, else text
 *   response-healing     non-streamed JSON replies (response_format json_object / json_schema) repaired and checked
 *   context-compression  `engine: "middle-out"`: messages removed from the middle until the prompt fits the context
 *   web                  the web search server tool (`max_results`, `search_prompt` as its parameters)
 *   moderation           the request's text checked by the configured moderation endpoint before any upstream call
 */
import type { PipelineEntry } from './content-filters/screen.js';
import { badRequest } from './errors.js';

export type PdfEngine = 'native' | 'text';
export const PLUGIN_IDS = ['file-parser', 'response-healing', 'context-compression', 'web', 'moderation'] as const;
export type PluginId = (typeof PLUGIN_IDS)[number];

export interface PluginSettings {
  /** file-parser: the PDF engine asked for (null: chosen per model), or off. */
  fileParser: { enabled: boolean; engine: PdfEngine | null };
  responseHealing: boolean;
  middleOut: boolean;
  /** web: the web search tool's parameters, or null. */
  web: Record<string, unknown> | null;
  moderation: boolean;
}

export const NO_PLUGINS: Readonly<PluginSettings> = Object.freeze({ fileParser: { enabled: true, engine: null }, responseHealing: false, middleOut: false, web: null, moderation: false });

const ENGINES: Record<string, PdfEngine> = { native: 'native', text: 'text', 'pdf-text': 'text', 'cloudflare-ai': 'text' };
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The plugins of a request body (validated by its schema as a list of objects with an `id`). */
export function pluginSettings(plugins: unknown): PluginSettings {
  if (plugins === undefined || plugins === null) return NO_PLUGINS;
  if (!Array.isArray(plugins)) throw badRequest('plugins must be an array', { field: 'plugins' });
  const out: PluginSettings = { fileParser: { enabled: true, engine: null }, responseHealing: false, middleOut: false, web: null, moderation: false };
  plugins.forEach((p, i) => {
    const at = `plugins[${i}]`;
    if (!isObj(p) || typeof p.id !== 'string') throw badRequest(`${at}.id is required`, { field: `${at}.id` });
    const on = p.enabled !== false;
    switch (p.id) {
      case 'file-parser': {
        const pdf = p.pdf;
        if (pdf !== undefined && !isObj(pdf)) throw badRequest(`${at}.pdf must be an object`, { field: `${at}.pdf` });
        const engine = pdf?.engine;
        if (engine === 'mistral-ocr') throw badRequest(`${at}.pdf.engine: mistral-ocr (OCR) is not offered by this gateway; use native or text`, { field: `${at}.pdf.engine` });
        if (engine !== undefined && (typeof engine !== 'string' || !ENGINES[engine])) {
          throw badRequest(`${at}.pdf.engine must be one of native, text (also pdf-text, cloudflare-ai)`, { field: `${at}.pdf.engine` });
        }
        out.fileParser = { enabled: on, engine: typeof engine === 'string' ? ENGINES[engine] : null };
        return;
      }
      case 'response-healing':
        out.responseHealing = on;
        return;
      case 'context-compression':
        if (p.engine !== undefined && p.engine !== 'middle-out') throw badRequest(`${at}.engine must be middle-out`, { field: `${at}.engine` });
        out.middleOut = on;
        return;
      case 'web': {
        const params: Obj = {};
        if (p.max_results !== undefined) {
          if (!Number.isInteger(p.max_results) || (p.max_results as number) < 1 || (p.max_results as number) > 25) throw badRequest(`${at}.max_results must be an integer from 1 to 25`, { field: `${at}.max_results` });
          params.max_results = p.max_results;
        }
        if (p.search_prompt !== undefined) {
          if (typeof p.search_prompt !== 'string' || p.search_prompt.length > 4000) throw badRequest(`${at}.search_prompt must be a string of at most 4000 characters`, { field: `${at}.search_prompt` });
          params.search_prompt = p.search_prompt;
        }
        out.web = on ? params : null;
        return;
      }
      case 'moderation':
        out.moderation = on;
        return;
      default:
        throw badRequest(`${at}.id: "${p.id}" is not a plugin this gateway runs (it runs ${PLUGIN_IDS.join(', ')})`, { field: `${at}.id` });
    }
  });
  return out;
}

/** A `gateway_metadata.pipeline` entry of a plugin (reference: pipeline[{type, name, summary, data, cost_usd}]). */
export interface PluginPipelineEntry {
  type: 'plugin' | 'response_healing' | 'context_compression';
  name: string;
  summary: string;
  data: Record<string, unknown>;
  cost_usd?: number;
}

/** Any entry of `gateway_metadata.pipeline`: a content guardrail's or a plugin's. */
export type AnyPipelineEntry = PipelineEntry | PluginPipelineEntry;
