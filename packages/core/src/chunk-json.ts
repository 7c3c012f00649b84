/**
 * The key under which a provider may keep, on a chunk it parsed, the JSON text it parsed it from,
 * untouched since: the gateway then splices its own `id`, `model` and `obfuscation` into that text
 * instead of serialising the chunk again (packages/gateway/src/chat-sse-format.ts). A registered
 * symbol, so that every copy of this package agrees on it; `JSON.stringify` and `structuredClone`
 * skip symbol keys, so the chunk serialises as before.
 */
export const CHUNK_JSON: unique symbol = Symbol.for('tollgate.chunk-json');

/** A chunk that may carry the JSON text it was parsed from. */
export type WithChunkJson = { [CHUNK_JSON]?: string };
