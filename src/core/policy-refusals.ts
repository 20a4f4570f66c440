/**
 * The refusals of the effective policy (core/policy.ts): a request whose every model is blocked, and a spent budget,
 * as the status, message and metadata the API answers with. PURE logic: no I/O.
 */
import type { Budget, ModelAccess, PolicySource } from './policy.js';

export interface PolicyRefusal {
  status: 403 | 404;
  message: string;
  metadata: Record<string, unknown>;
}

function sourceView(s: PolicySource): Record<string, unknown> {
  return s.kind === 'organization' ? { source: 'organization' } : { source: 'guardrail', guardrail_id: s.id, guardrail_name: s.name, guardrail_scope: s.scope };
}

const byWhom = (s: PolicySource) => (s.kind === 'organization' ? 'the organization settings' : `guardrail "${s.name}"`);

/**
 * The refusal for a request whose every requested model is blocked, from the first model's decisive verdict.
 * A guardrail's model or provider list → 403 `Blocked by guardrail "<name>"`; organization settings and privacy rules
 * (ZDR, data collection) from either → 404, like any route with no endpoint left. `metadata.excluded_by` lists the
 * reasons; `metadata.policy` names the setting and who set it.
 */
export function refusal(blocked: Array<{ model: string; access: ModelAccess }>): PolicyRefusal {
  const first = blocked[0];
  const v = first.access.blocked!;
  const excluded_by: string[] = [];
  for (const b of blocked) for (const r of b.access.reasons) if (!excluded_by.includes(r)) excluded_by.push(r);
  const model = first.model;
  const names = blocked.map((b) => b.model).join(', ');
  const policy = { setting: v.reason, ...sourceView(v.source) };
  const privacy = v.reason.startsWith('data_policy:');
  if (v.source.kind === 'guardrail' && !privacy) {
    const detail: Record<string, string> = {
      allowed_models: `${model} is not among its allowed models`,
      ignored_models: `${model} is among its ignored models`,
      allowed_providers: `no provider of ${model} is among its allowed providers`,
      ignored_providers: `every provider of ${model} is among its ignored providers`,
    };
    return {
      status: 403,
      message: `Blocked by guardrail "${v.source.name}": ${detail[v.reason]}`,
      metadata: { error_type: 'permission_denied', guardrail_id: v.source.id, guardrail_name: v.source.name, guardrail_scope: v.source.scope, excluded_by, policy, requested_models: blocked.map((b) => b.model) },
    };
  }
  let message: string;
  switch (v.reason) {
    case 'allowed_models':
      message = `Model ${model} is not available: it is not among the allowed models of ${byWhom(v.source)}`;
      break;
    case 'ignored_models':
      message = `Model ${model} is not available: it is among the ignored models of ${byWhom(v.source)}`;
      break;
    case 'allowed_providers':
    case 'ignored_providers':
      message = `No endpoints found for ${names} that match the provider settings of ${byWhom(v.source)} (${v.reason})`;
      break;
    case 'data_policy:zdr':
      message = `No endpoints found for ${names} that match your data policy (zero data retention required by ${byWhom(v.source)})`;
      break;
    default:
      message = `No endpoints found for ${names} that match your data policy (data collection denied by ${byWhom(v.source)})`;
  }
  return {
    status: 404,
    message,
    metadata: { error_type: privacy ? 'privacy_restricted' : 'constraint_filtered', excluded_by, policy, requested_models: blocked.map((b) => b.model) },
  };
}

/** The refusal for a spent budget. */
export function budgetRefusal(b: Budget, spent: number): PolicyRefusal {
  const period = b.resetInterval ? `${b.resetInterval} ` : 'lifetime ';
  return {
    status: 403,
    message: `Blocked by guardrail "${b.name}": its ${period}budget of $${b.limitUsd} is spent ($${Math.round(spent * 1e6) / 1e6} used)`,
    metadata: {
      error_type: 'permission_denied',
      guardrail_id: b.guardrailId,
      guardrail_name: b.name,
      guardrail_scope: b.scope,
      excluded_by: ['budget'],
      limit_usd: b.limitUsd,
      reset_interval: b.resetInterval,
      usage: spent,
    },
  };
}
