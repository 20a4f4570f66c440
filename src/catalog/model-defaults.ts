/** Catalog helpers shared by the per-API model lists (video, embeddings, transcription, rerank). Pure data. */
import type { Architecture, ModelDef } from '../core/catalog-types.js';

/** Unix seconds at 00:00 UTC of an ISO date (YYYY-MM-DD). */
export function unixDay(isoDate: string): number {
  return Date.parse(`${isoDate}T00:00:00Z`) / 1000;
}

/**
 * A model of a non-chat API: its own fields and modalities, no reasoning, voices, default parameters or dates; the
 * canonical slug is the id.
 */
export function apiModel(m: Pick<ModelDef, 'id' | 'name' | 'created' | 'description' | 'context_length'>, io: { input: string[]; output: string[]; tokenizer?: string }): ModelDef {
  const architecture: Architecture = { modality: `${io.input.join('+')}->${io.output.join('+')}`, input_modalities: io.input, output_modalities: io.output, tokenizer: io.tokenizer ?? 'Other', instruct_type: null };
  return {
    ...m,
    canonical_slug: m.id,
    architecture,
    reasoning: null,
    knowledge_cutoff: null,
    expiration_date: null,
    hugging_face_id: null,
    default_parameters: null,
    supported_voices: null,
  };
}
