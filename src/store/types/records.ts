/** Tables whose queries live in modules of their own: BYOK credentials, files, feedback, logged content, destinations (store/sql/records.ts). */

/** BYOK credentials, files, feedback, logged content and broadcast destinations. */
export interface RecordStore {
  /** BYOK credentials (store/byok.ts; docs/byok.md): the secret sealed, deletion soft (secret wiped). */
  insertByokCredential(row: import('../byok.js').ByokCredentialRow): Promise<void>;
  listActiveByokCredentials(): Promise<Array<import('../byok.js').ByokCredentialRow>>;
  getByokCredential(id: string): Promise<import('../byok.js').ByokCredentialRow | null>;
  updateByokCredential(id: string, patch: import('../byok.js').ByokCredentialPatch): Promise<boolean>;
  nextByokSortOrder(provider: string, workspaceId: string | null): Promise<number>;
  /** Files (store/files.ts): rows of a workspace's files; the bytes are in the blob storage. */
  /** Inserted only if the workspace's files stay within quotaBytes (checked and inserted atomically). */
  insertFile(row: import('../files.js').FileRow, quotaBytes: number): Promise<{ inserted: boolean; used: number }>;
  getFile(workspace_id: string, id: string): Promise<import('../files.js').FileRow | null>;
  /** Oldest first, after an id; at most limit + 1 rows. */
  listFiles(workspace_id: string, after: string | null, limit: number): Promise<Array<import('../files.js').FileRow>>;
  workspaceFileBytes(workspace_id: string): Promise<number>;
  deleteFile(workspace_id: string, id: string): Promise<boolean>;
  getFileParse(sha256: string, engine: string): Promise<import('../files.js').FileParseRow | null>;
  putFileParse(row: import('../files.js').FileParseRow): Promise<void>;
  /** Feedback on generations (store/feedback.ts): one row per submission. */
  addGenerationFeedback(row: import('../feedback.js').GenerationFeedbackRow): Promise<void>;
  listGenerationFeedback(generationId: string): Promise<Array<import('../feedback.js').GenerationFeedbackRow>>;
  /** Logged content (I/O logging, store/generation-content.ts). */
  recordGenerationContent(rows: import('../generation-content.js').GenerationContentRow[]): Promise<void>;
  getGenerationContent(id: string): Promise<import('../generation-content.js').GenerationContentRow | null>;
  generationContentIds(ids: string[]): Promise<Set<string>>;
  /** Deletes content created before `before` (ISO), at most `limit` rows; returns how many. */
  deleteGenerationContentBefore(before: string, limit: number): Promise<number>;
  /** Broadcast destinations (store/destinations.ts). */
  insertDestination(row: import('../destinations.js').DestinationRow): Promise<void>;
  getDestination(id: string): Promise<import('../destinations.js').DestinationRow | null>;
  /** A workspace's (null: every workspace's) destinations, not deleted, oldest first. */
  listDestinations(workspaceId: string | null): Promise<Array<import('../destinations.js').DestinationRow>>;
  updateDestination(id: string, patch: Partial<import('../destinations.js').DestinationRow>): Promise<import('../destinations.js').DestinationRow | null>;
  addDestinationStats(id: string, stats: import('../destinations.js').DestinationStats): Promise<void>;
}
