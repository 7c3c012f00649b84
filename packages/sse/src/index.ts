export type { SseEvent } from './sse-event';
export { createSseDecoder } from './create-sse-decoder';
export { createSseParser } from './create-sse-parser';
export type { SseParser } from './create-sse-parser';
export { SSE_DONE, SSE_KEEPALIVE, sseComment, sseData, sseError } from './sse-encoders';
export { createObfuscator } from './create-obfuscator';
export type { ObfuscatorOptions } from './create-obfuscator';
export { createKeepalive } from './create-keepalive';
export type { Keepalive, KeepaliveOptions } from './create-keepalive';
