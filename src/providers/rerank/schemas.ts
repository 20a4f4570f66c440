/**
 * The rerank answers as index.ts reads them, one schema per shape (jina, cohere, voyage): the results with their
 * index and score, and the usage; unknown fields pass. Indexes within the documents and each once are checked after.
 */
import { Type } from '@sinclair/typebox';
import { Count, Opt, wireCheck } from '../wire-schema.js';

const Results = Type.Array(Type.Object({ index: Type.Integer(), relevance_score: Type.Number() }));
const Usage = Opt(Type.Object({ total_tokens: Count, prompt_tokens: Count }));
const Id = Opt(Type.String());

export const checkJinaRerank = wireCheck(Type.Object({ id: Id, results: Results, usage: Usage }), 'response');
export const checkCohereRerank = wireCheck(Type.Object({ id: Id, results: Results, meta: Opt(Type.Object({ billed_units: Opt(Type.Object({ search_units: Count })) })) }), 'response');
export const checkVoyageRerank = wireCheck(Type.Object({ data: Results, usage: Usage }), 'response');
