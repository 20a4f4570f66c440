/** GET /generation: one generation record, for the key that made it (inference keys) or any (management keys). */
import { notFound } from '../core/errors.js';
import type { GenerationRow, KeyKind, Store } from '../store/types.js';
import type { GenerationRecorder } from './generations.js';

/** Who asks: an inference key sees its own generations only; a management key sees every one. */
export interface GenerationViewer {
  kind: KeyKind;
  hash: string;
}

export class GenerationLookup {
  constructor(
    private readonly store: Store,
    private readonly recorder: GenerationRecorder,
  ) {}

  /**
   * The record, still queued (written asynchronously) or stored. Another key's generation is indistinguishable from a
   * missing one: both are a 404.
   */
  async get(id: string, viewer: GenerationViewer): Promise<GenerationRow> {
    const g = this.recorder.peek(id) ?? (await this.store.getGeneration(id));
    if (!g || (viewer.kind === 'inference' && g.key_hash !== viewer.hash)) throw notFound(`Generation ${id} not found`);
    return g;
  }
}
