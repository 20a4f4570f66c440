/** Tables whose queries live in modules of their own: BYOK credentials, files, feedback, logged content, broadcast destinations. */
import { SqlBase } from './base.js';
import { insertFeedback, selectFeedback, type GenerationFeedbackRow } from '../feedback.js';
import { insertByok, nextByokSortOrder, selectActiveByok, selectByok, updateByok, type ByokCredentialPatch, type ByokCredentialRow } from '../byok.js';
import { deleteFileRow, insertFile, selectFile, selectFiles, selectParse, upsertParse, workspaceFileBytes, type FileParseRow, type FileRow } from '../files.js';
import { addDestinationStats, insertDestination, selectDestination, selectDestinations, updateDestinationRow, type DestinationRow, type DestinationStats } from '../destinations.js';
import { deleteContentBefore, insertContent, selectContent, selectContentIds, type GenerationContentRow } from '../generation-content.js';
import type { RecordStore } from '../types.js';

export abstract class RecordSql extends SqlBase implements RecordStore {
  async insertByokCredential(row: ByokCredentialRow): Promise<void> {
    await insertByok(this.db, this.kind, row);
  }

  listActiveByokCredentials(): Promise<ByokCredentialRow[]> {
    return selectActiveByok(this.db);
  }

  getByokCredential(id: string): Promise<ByokCredentialRow | null> {
    return selectByok(this.db, id);
  }

  updateByokCredential(id: string, patch: ByokCredentialPatch): Promise<boolean> {
    return updateByok(this.db, this.kind, id, patch);
  }

  nextByokSortOrder(provider: string, workspaceId: string | null): Promise<number> {
    return nextByokSortOrder(this.db, provider, workspaceId);
  }

  /** Files (store/files.ts). */
  insertFile(row: FileRow, quotaBytes: number): Promise<{ inserted: boolean; used: number }> {
    return insertFile(this.db, this.kind, row, quotaBytes);
  }

  getFile(workspace_id: string, id: string): Promise<FileRow | null> {
    return selectFile(this.db, workspace_id, id);
  }

  listFiles(workspace_id: string, after: string | null, limit: number): Promise<FileRow[]> {
    return selectFiles(this.db, workspace_id, after, limit);
  }

  workspaceFileBytes(workspace_id: string): Promise<number> {
    return workspaceFileBytes(this.db, workspace_id);
  }

  deleteFile(workspace_id: string, id: string): Promise<boolean> {
    return deleteFileRow(this.db, workspace_id, id);
  }

  getFileParse(sha256: string, engine: string): Promise<FileParseRow | null> {
    return selectParse(this.db, sha256, engine);
  }

  putFileParse(row: FileParseRow): Promise<void> {
    return upsertParse(this.db, row);
  }

  /** Feedback on generations (store/feedback.ts). */
  async addGenerationFeedback(row: GenerationFeedbackRow): Promise<void> {
    await insertFeedback(this.db, row);
  }

  async listGenerationFeedback(generationId: string): Promise<GenerationFeedbackRow[]> {
    return selectFeedback(this.db, generationId);
  }

  /** Logged content (store/generation-content.ts). */
  async recordGenerationContent(rows: GenerationContentRow[]): Promise<void> {
    if (rows.length > 0) await insertContent(this.db, rows);
  }

  async getGenerationContent(id: string): Promise<GenerationContentRow | null> {
    return selectContent(this.db, id);
  }

  async generationContentIds(ids: string[]): Promise<Set<string>> {
    return selectContentIds(this.db, ids);
  }

  async deleteGenerationContentBefore(before: string, limit: number): Promise<number> {
    return deleteContentBefore(this.db, before, limit);
  }

  /** Broadcast destinations (store/destinations.ts). */
  async insertDestination(row: DestinationRow): Promise<void> {
    await insertDestination(this.db, this.kind, row);
  }

  async getDestination(id: string): Promise<DestinationRow | null> {
    return selectDestination(this.db, id);
  }

  async listDestinations(workspaceId: string | null): Promise<DestinationRow[]> {
    return selectDestinations(this.db, workspaceId);
  }

  async updateDestination(id: string, patch: Partial<DestinationRow>): Promise<DestinationRow | null> {
    return updateDestinationRow(this.db, this.kind, id, patch);
  }

  async addDestinationStats(id: string, stats: DestinationStats): Promise<void> {
    await addDestinationStats(this.db, id, stats);
  }
}
