/**
 * The image sizes each Bedrock image family takes, and the gateway's `size` / `aspect_ratio` mapped onto them
 * (pure; used by images.ts and by the images service's per-endpoint check). Sources, AWS's model parameter pages:
 *
 * - Amazon Nova Canvas (docs.aws.amazon.com/nova/latest/userguide/image-gen-req-resp-structure.html): width and
 *   height each 320–4096 pixels and divisible by 16, aspect ratio between 1:4 and 4:1, at most 4,194,304 pixels
 *   (2048×2048); 1–5 images; seed 0–858,993,459.
 * - Amazon Titan Image Generator G1 v1/v2 (docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-image.html):
 *   a fixed list of sizes (below); 1–5 images; seed 0–2,147,483,646.
 * - Stability AI (SD3.5 Large, Stable Image Core/Ultra; docs.aws.amazon.com/bedrock/latest/userguide/
 *   model-parameters-diffusion-3-5-large.html): no pixel size, an `aspect_ratio` of 16:9, 1:1, 21:9, 2:3, 3:2, 4:5,
 *   5:4, 9:16, 9:21 (about one megapixel); one image per call; seed 0–4,294,967,294; `output_format` jpeg, png or webp.
 */

export type BedrockImageFamily = 'nova-canvas' | 'titan-image' | 'stability';

/** The family of an upstream model id (an inference profile's region prefix such as `us.` is skipped). */
export function imageFamily(modelId: string): BedrockImageFamily | null {
  const id = modelId.replace(/^(us|eu|apac|global)\./, '').replace(/^arn:aws[a-z-]*:bedrock:[^:]*:[^:]*:foundation-model\//, '');
  if (id.startsWith('amazon.nova-canvas')) return 'nova-canvas';
  if (id.startsWith('amazon.titan-image-generator')) return 'titan-image';
  if (id.startsWith('stability.')) return 'stability';
  return null;
}

export const TITAN_SIZES = [
  '1024x1024', '768x768', '512x512', '768x1152', '384x576', '1152x768', '576x384', '768x1280', '384x640', '1280x768', '640x384',
  '896x1152', '448x576', '1152x896', '576x448', '768x1408', '384x704', '1408x768', '704x384', '640x1408', '320x704', '1408x640',
  '704x320', '1152x640', '1173x640',
];
export const STABILITY_RATIOS = ['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21'];
export const MAX_IMAGES = { 'nova-canvas': 5, 'titan-image': 5, stability: 1 } as const;
export const MAX_SEED = { 'nova-canvas': 858_993_459, 'titan-image': 2_147_483_646, stability: 4_294_967_294 } as const;
export const FAMILY_NAME = { 'nova-canvas': 'Amazon Nova Canvas', 'titan-image': 'Amazon Titan Image Generator', stability: 'Stability AI on Bedrock' } as const;

const PIXELS = /^(\d{2,5})x(\d{2,5})$/;
const TIER = /^(\d)K$/i;
const RATIO = /^(\d{1,2}):(\d{1,2})$/;

/** The size-related part of an image request. */
export interface SizeAsk {
  size?: string;
  aspect_ratio?: string;
}

/** A request the family cannot take: the field to name and why. */
export interface SizeProblem {
  field: string;
  message: string;
}

export type SizeChoice = { width: number; height: number } | { ratio: string } | null;

const ratioOf = (r: string): number | null => {
  const m = RATIO.exec(r);
  return m && Number(m[2]) > 0 ? Number(m[1]) / Number(m[2]) : null;
};
const near = (a: number, b: number) => Math.abs(a / b - 1) <= 0.02;
/** Down to a multiple of 16 (Nova's step), so that a size of about one megapixel stays within it. */
const round16 = (n: number) => Math.max(16, Math.floor(n / 16) * 16);

function novaProblem(w: number, h: number): string | null {
  if (w < 320 || h < 320 || w > 4096 || h > 4096) return 'width and height must each be 320 to 4096 pixels';
  if (w % 16 !== 0 || h % 16 !== 0) return 'width and height must be divisible by 16';
  if (w / h > 4 || h / w > 4) return 'the aspect ratio must be between 1:4 and 4:1';
  if (w * h > 4_194_304) return 'at most 4,194,304 pixels (2048x2048)';
  return null;
}

/** The pixel size for a requested aspect ratio (`short` pixels on the short side, else about one megapixel). */
function novaForRatio(r: number, short: number | null): { width: number; height: number } {
  if (short !== null) return r >= 1 ? { width: round16(short * r), height: short } : { width: short, height: round16(short / r) };
  const area = 1024 * 1024;
  return { width: round16(Math.sqrt(area * r)), height: round16(Math.sqrt(area / r)) };
}

/** Titan's listed size of that ratio, the largest not above 1024×1024 pixels (null: none). */
function titanForRatio(r: number): { width: number; height: number } | null {
  const fits = TITAN_SIZES.map((s) => s.split('x').map(Number)).filter(([w, h]) => near(w / h, r) && w * h <= 1024 * 1024);
  fits.sort((a, b) => b[0] * b[1] - a[0] * a[1]);
  return fits[0] ? { width: fits[0][0], height: fits[0][1] } : null;
}

/**
 * What the family is sent for the request's size and aspect ratio: pixels (Nova, Titan), a ratio (Stability), or
 * null (the model's default, 1024×1024 or 1:1); a problem naming the field when the family cannot take them.
 */
export function chooseSize(family: BedrockImageFamily, ask: SizeAsk): SizeChoice | SizeProblem {
  const name = FAMILY_NAME[family];
  const px = ask.size ? PIXELS.exec(ask.size) : null;
  const tier = ask.size ? TIER.exec(ask.size) : null;
  const ratioText = ask.aspect_ratio && ask.aspect_ratio !== 'auto' ? ask.aspect_ratio : null;
  const ratio = ratioText ? ratioOf(ratioText) : null;
  if (ratioText && ratio === null) return { field: 'aspect_ratio', message: `aspect_ratio ${ratioText} is not W:H` };
  if (ask.size && ask.size !== 'auto' && !px && !tier) return { field: 'size', message: `size ${ask.size} is not WIDTHxHEIGHT or a tier such as 1K` };
  if (family === 'stability') {
    if (px) {
      const r = Number(px[1]) / Number(px[2]);
      const match = STABILITY_RATIOS.find((s) => near(ratioOf(s)!, r));
      if (!match) return { field: 'size', message: `${name} takes no pixel size, only an aspect ratio (${STABILITY_RATIOS.join(', ')}); size ${ask.size} matches none` };
      return { ratio: match };
    }
    if (tier && tier[1] !== '1') return { field: 'size', message: `${name} generates about one megapixel: size ${ask.size} is not available (use 1K or an aspect_ratio)` };
    if (ratioText) return STABILITY_RATIOS.includes(ratioText) ? { ratio: ratioText } : { field: 'aspect_ratio', message: `${name} takes aspect_ratio ${STABILITY_RATIOS.join(', ')}; not ${ratioText}` };
    return null;
  }
  if (px) {
    const [w, h] = [Number(px[1]), Number(px[2])];
    if (family === 'titan-image') return TITAN_SIZES.includes(ask.size!) ? { width: w, height: h } : { field: 'size', message: `${name} takes the sizes ${TITAN_SIZES.join(', ')}; not ${ask.size}` };
    const bad = novaProblem(w, h);
    return bad ? { field: 'size', message: `${name}: size ${ask.size} is not available (${bad})` } : { width: w, height: h };
  }
  const short = tier ? Number(tier[1]) * 1024 : null;
  if (family === 'titan-image') {
    if (short !== null && short !== 1024) return { field: 'size', message: `${name} generates at most 1408 pixels on a side: size ${ask.size} is not available` };
    if (ratio === null) return null;
    return titanForRatio(ratio) ?? { field: 'aspect_ratio', message: `${name} has no size of aspect ratio ${ratioText} (its sizes: ${TITAN_SIZES.join(', ')})` };
  }
  if (ratio === null && short === null) return null;
  const s = novaForRatio(ratio ?? 1, short);
  const bad = novaProblem(s.width, s.height);
  if (bad) return { field: ratio !== null && (ratio > 4 || ratio < 0.25) ? 'aspect_ratio' : 'size', message: `${name}: ${ratioText ? `aspect_ratio ${ratioText}` : ''}${ratioText && ask.size ? ' at ' : ''}${ask.size ? `size ${ask.size}` : ''} is not available (${bad})` };
  return s;
}

export const isProblem = (c: SizeChoice | SizeProblem): c is SizeProblem => c !== null && 'field' in c;
