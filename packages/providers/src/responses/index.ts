export { chatCompletionToResponse } from './chat-completion-to-response';
export { createResponseEvents } from './create-response-events';
export type { ResponseEvents } from './create-response-events';
export { encodeResponseEvent } from './encode-response-event';
export { finishStatus, randomItemId, responseId, responseObject } from './response-meta';
export type { ResponseMeta } from './response-meta';
export { toResponseUsage } from './to-response-usage';
