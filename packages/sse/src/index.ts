export type { SseEvent } from './sse-event';
export { createSseDecoder } from './create-sse-decoder';
export { createSseParser, DEFAULT_MAX_EVENT_LENGTH, SseEventTooLongError } from './create-sse-parser';
export type { SseParser, SseParserOptions } from './create-sse-parser';
export { SSE_DONE, SSE_KEEPALIVE, sseComment, sseData, sseError } from './sse-encoders';
export { createObfuscator } from './create-obfuscator';
export type { ObfuscatorOptions } from './create-obfuscator';
export { createKeepalive } from './create-keepalive';
export type { Keepalive, KeepaliveOptions } from './create-keepalive';
