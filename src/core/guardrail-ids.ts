/**
 * Workspace default guardrails: their ids are name-based (v5) UUIDs of the workspace id, the same on every instance,
 * so they are never stored. PURE logic: no I/O.
 */
import { createHash } from 'node:crypto';

const DEFAULT_GUARDRAIL_NAMESPACE = Buffer.from('6f1c2a9e4b7d4e0f9a3c5d7e8f901234', 'hex');

/** A name-based (v5) UUID of `name` in `namespace` (16 bytes): the same on every instance, for ids never stored. */
export function nameUuid(namespace: Buffer, name: string): string {
  const h = createHash('sha1').update(namespace).update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The id of a workspace's default guardrail: a name-based (v5) UUID of the workspace id, stable everywhere. */
export function workspaceGuardrailId(workspaceId: string): string {
  return nameUuid(DEFAULT_GUARDRAIL_NAMESPACE, workspaceId);
}

export function workspaceGuardrailName(workspaceId: string): string {
  return `Workspace ${workspaceId} Default`;
}
