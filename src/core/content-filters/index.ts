export * from './types.js';
export { checkPattern, MAX_PATTERN_LENGTH, type PatternProblem } from './regex-safety.js';
export { BUILTINS, builtinLabel } from './builtins.js';
export { compileFilters, scanText, applyRedactions, type GuardrailFilters, type FilterHit, type ScanResult } from './engine.js';
export { requestTexts, type TextSlot } from './request-text.js';
export { screenRequest, type ScreenOutcome, type PipelineEntry } from './screen.js';
export { StreamRedactor, type StreamStep } from './stream.js';
export { responseTexts } from './response-text.js';
export { IrStreamGuard } from './ir-stream.js';
