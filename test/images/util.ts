/** The image test catalog: OpenAI-images providers (per-token and per-image prices) and a Gemini image provider. */
export const TOKEN_PRICE = { prompt: '0.000005', completion: '0.00004' };
export const PER_IMAGE = { image_output: '0.04' };
export const GEMINI_PRICE = { prompt: '0.0000003', completion: '0.00003' };

export function imageCatalog(simUrl: string) {
  const zdr = { training: false, retains_prompts: false, zdr: true };
  const provider = (slug: string, protocol: string, version: string) => ({ slug, name: `Sim ${slug.slice(4)}`, protocol, base_url: `${simUrl}/${slug}/${version}`, no_auth: true, data_policy: zdr });
  const model = (id: string, outputs = ['image']) => ({ id, name: id, context_length: 0, input_modalities: ['text', 'image'], output_modalities: outputs });
  const all = ['n', 'size', 'quality', 'background', 'output_format', 'input_references'];
  return {
    providers: [provider('sim-img', 'openai', 'v1'), provider('sim-img2', 'openai', 'v1'), provider('sim-gimg', 'google', 'v1beta')],
    models: [model('test/gpt-image'), model('test/dalle'), model('test/both'), { ...model('test/gemini-image', ['image', 'text']), context_length: 32768 }],
    endpoints: [
      { model: 'test/gpt-image', provider: 'sim-img', upstream_model: 'gpt-image-1', pricing: TOKEN_PRICE, supported_parameters: all },
      { model: 'test/dalle', provider: 'sim-img', upstream_model: 'dall-e-3', pricing: PER_IMAGE, supported_parameters: ['size', 'quality'] },
      { model: 'test/both', provider: 'sim-img', upstream_model: 'gpt-image-1', pricing: TOKEN_PRICE, supported_parameters: all },
      { model: 'test/both', provider: 'sim-img2', upstream_model: 'gpt-image-1', pricing: { prompt: '0.00001', completion: '0.00008' }, supported_parameters: all },
      { model: 'test/gemini-image', provider: 'sim-gimg', upstream_model: 'gemini-2.5-flash-image', pricing: GEMINI_PRICE, supported_parameters: ['modalities', 'aspect_ratio', 'seed', 'input_references', 'max_tokens', 'temperature'] },
    ],
  };
}

