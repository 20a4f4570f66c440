/**
 * Upstream providers the gateway ships with.
 *
 * Every entry is a hosted API that needs a key (read from `apiKeyEnv`). Local
 * OpenAI-compatible servers (vLLM, Ollama, llama.cpp, the simulator) need no key and
 * are only routable when their base-URL variable is set, so they are NOT listed here:
 * the config file adds them.
 *
 * `dataPolicy` describes the provider's default treatment of API traffic (not its
 * consumer apps), as its public policy states. Where zero data retention exists only
 * on request / for enterprise accounts, `zdr` is false: the flag says what a default
 * account gets. Policies checked 2026-11; sources are cited per provider.
 *
 * Pure data; no I/O.
 */
import type { ProviderDef } from '../core/catalog-types.js';

export const DEFAULT_PROVIDERS: ProviderDef[] = [
  // OpenAI — developers.openai.com/api/docs/guides/your-data (checked 2026-11):
  // API data is not used for training unless the customer opts in; abuse-monitoring
  // logs (prompts and responses) are kept up to 30 days; ZDR needs prior approval.
  {
    slug: 'openai',
    name: 'OpenAI',
    protocol: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    tokenCounting: 'openai-responses',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://openai.com/policies/privacy-policy/',
    termsOfServiceUrl: 'https://openai.com/policies/services-agreement/',
    statusPageUrl: 'https://status.openai.com',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // Anthropic — anthropic.com/legal/commercial-terms and privacy (checked 2026-11):
  // commercial API traffic is not used for training; inputs/outputs are retained for a
  // limited period for trust & safety; ZDR only by separate agreement.
  {
    slug: 'anthropic',
    name: 'Anthropic',
    protocol: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://www.anthropic.com/legal/privacy',
    termsOfServiceUrl: 'https://www.anthropic.com/legal/commercial-terms',
    statusPageUrl: 'https://status.anthropic.com',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // Google AI Studio (Gemini Developer API) — ai.google.dev/gemini-api/terms (checked
  // 2026-11): on the paid tier prompts are not used to improve Google products but are
  // logged for a limited period for abuse detection. (The free tier may train: the
  // gateway assumes a billing-enabled key.)
  {
    slug: 'google-ai-studio',
    name: 'Google AI Studio',
    protocol: 'google',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    apiKeyEnv: 'GEMINI_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://policies.google.com/privacy',
    termsOfServiceUrl: 'https://ai.google.dev/gemini-api/terms',
    statusPageUrl: 'https://aistudio.google.com/status',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // Groq — console.groq.com/docs/your-data (checked 2026-11): "By default, Groq does
  // not retain customer data for inference requests"; data is kept only for features
  // that need it (batch, fine-tuning) or, exceptionally, to troubleshoot/investigate
  // abuse; no training on API data. Formal ZDR is a Data Controls setting.
  {
    slug: 'groq',
    name: 'Groq',
    protocol: 'openai',
    baseUrl: 'https://api.groq.com/openai/v1',
    apiKeyEnv: 'GROQ_API_KEY',
    dataPolicy: { training: false, retainsPrompts: false, zdr: false },
    privacyPolicyUrl: 'https://groq.com/privacy-policy/',
    termsOfServiceUrl: 'https://groq.com/terms-of-use/',
    statusPageUrl: 'https://groqstatus.com',
    headquarters: 'US',
    datacenters: ['US', 'SA', 'FI'],
  },
  // Together AI — docs.together.ai/docs/zero-data-retention (checked 2026-11): unless
  // the organisation enables ZDR, Together stores prompts and responses (may use them
  // for product improvement); training on customer data is a separate opt-in, off by
  // default.
  {
    slug: 'together',
    name: 'Together AI',
    protocol: 'openai',
    baseUrl: 'https://api.together.xyz/v1',
    apiKeyEnv: 'TOGETHER_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://www.together.ai/privacy',
    termsOfServiceUrl: 'https://www.together.ai/terms-of-service',
    statusPageUrl: 'https://status.together.ai',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // Fireworks AI — docs.fireworks.ai/guides/security_compliance/data_handling (checked
  // 2026-11): "Zero Data Retention by default" for open models — prompts and generations
  // live only in volatile memory; no training on customer data.
  {
    slug: 'fireworks',
    name: 'Fireworks',
    protocol: 'openai',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    apiKeyEnv: 'FIREWORKS_API_KEY',
    dataPolicy: { training: false, retainsPrompts: false, zdr: true },
    privacyPolicyUrl: 'https://fireworks.ai/privacy-policy',
    termsOfServiceUrl: 'https://fireworks.ai/terms-of-service',
    statusPageUrl: 'https://status.fireworks.ai',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // DeepSeek — cdn.deepseek.com privacy policy / Open Platform terms (checked 2026-11):
  // the privacy policy lists training and improving models among the uses of inputs and
  // the platform terms carve out no API exception; data is stored in the PRC; no ZDR.
  {
    slug: 'deepseek',
    name: 'DeepSeek',
    protocol: 'openai',
    baseUrl: 'https://api.deepseek.com/v1',
    apiKeyEnv: 'DEEPSEEK_API_KEY',
    dataPolicy: { training: true, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://cdn.deepseek.com/policies/en-US/deepseek-privacy-policy.html',
    termsOfServiceUrl:
      'https://cdn.deepseek.com/policies/en-US/deepseek-open-platform-terms-of-service.html',
    statusPageUrl: 'https://status.deepseek.com',
    headquarters: 'CN',
    datacenters: ['CN'],
  },
  // Mistral AI — docs.mistral.ai/admin/monitor-comply/zero-data-retention and
  // mistral.ai/terms (checked 2026-11): paid API traffic is not used for training by
  // default; inputs/outputs are retained for abuse monitoring unless ZDR is granted
  // (on request, paid plans). Hosted in the EU.
  {
    slug: 'mistral',
    name: 'Mistral',
    protocol: 'openai',
    baseUrl: 'https://api.mistral.ai/v1',
    apiKeyEnv: 'MISTRAL_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://mistral.ai/terms#privacy-policy',
    termsOfServiceUrl: 'https://mistral.ai/terms',
    statusPageUrl: 'https://status.mistral.ai',
    headquarters: 'FR',
    datacenters: ['EU'],
  },
  // xAI — docs.x.ai/developers/faq/security (checked 2026-11): "xAI never trains on your
  // API inputs or outputs without your explicit permission"; requests and responses are
  // stored 30 days for abuse auditing; ZDR is enterprise-only.
  {
    slug: 'xai',
    name: 'xAI',
    protocol: 'openai',
    baseUrl: 'https://api.x.ai/v1',
    apiKeyEnv: 'XAI_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://x.ai/legal/privacy-policy',
    termsOfServiceUrl: 'https://x.ai/legal/terms-of-service-enterprise',
    statusPageUrl: 'https://status.x.ai',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // DeepInfra — docs.deepinfra.com/account/data-privacy (checked 2026-11): inputs and
  // outputs are held in memory only during inference, never written to disk; no
  // training. (Google/Anthropic models resold by DeepInfra follow those vendors'
  // policies; none are in the default catalog.)
  {
    slug: 'deepinfra',
    name: 'DeepInfra',
    protocol: 'openai',
    baseUrl: 'https://api.deepinfra.com/v1/openai',
    apiKeyEnv: 'DEEPINFRA_API_KEY',
    dataPolicy: { training: false, retainsPrompts: false, zdr: true },
    privacyPolicyUrl: 'https://deepinfra.com/privacy',
    termsOfServiceUrl: 'https://deepinfra.com/terms',
    statusPageUrl: 'https://status.deepinfra.com',
    headquarters: 'US',
    datacenters: ['US'],
  },
  // Cohere — only its rerank API is routed (POST /rerank, `rerank_protocol: cohere`; its chat API is not
  // OpenAI-compatible at this base URL). cohere.com/data-usage-policy (checked 2026-11): API data is not used for
  // training by default; logs are retained up to 30 days; zero retention on request.
  {
    slug: 'cohere',
    name: 'Cohere',
    protocol: 'openai',
    baseUrl: 'https://api.cohere.com/v2',
    apiKeyEnv: 'COHERE_API_KEY',
    dataPolicy: { training: false, retainsPrompts: true, zdr: false },
    privacyPolicyUrl: 'https://cohere.com/privacy',
    termsOfServiceUrl: 'https://cohere.com/terms-of-use',
    statusPageUrl: 'https://status.cohere.com',
    headquarters: 'CA',
    datacenters: ['US'],
  },
];
