/** The builtin filters by slug: detector and system-assigned label (reference: ContentFilterBuiltinEntry.label). */
import { findAddresses, findPersonNames, findPromptInjections } from './heuristics.js';
import { findCreditCards, findEmails, findIpAddresses, findPhones, findSsns } from './pii.js';
import type { BuiltinSlug, Span } from './types.js';

export const BUILTINS: Record<BuiltinSlug, { label: string; find: (text: string) => Span[] }> = {
  email: { label: '[EMAIL]', find: findEmails },
  phone: { label: '[PHONE]', find: findPhones },
  ssn: { label: '[SSN]', find: findSsns },
  'credit-card': { label: '[CREDIT_CARD]', find: findCreditCards },
  'ip-address': { label: '[IP_ADDRESS]', find: findIpAddresses },
  'person-name': { label: '[PERSON_NAME]', find: findPersonNames },
  address: { label: '[ADDRESS]', find: findAddresses },
  'regex-prompt-injection': { label: '[PROMPT_INJECTION]', find: findPromptInjections },
};

export const builtinLabel = (slug: BuiltinSlug): string => BUILTINS[slug].label;
