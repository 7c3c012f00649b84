export { ERROR_CATALOGUE, errorRecord, isErrorCode } from './errors';
export type { ErrorCode, ErrorRecord, ErrorType } from './errors';
export { GatewayError, retryAfterSeconds } from './gateway-error';
export type { GatewayErrorOptions } from './gateway-error';
export { HEADER } from './headers';
export type { Funding } from './headers';
export { completionId, randomBase62, requestId } from './ids';
export { ENDPOINT_LIMITS, PLAN_LIMITS, PLAN_NAMES, isPlan, planAllows } from './plans';
export type { Plan, PlanLimits } from './plans';
export { ACCOUNT_STATES, isAccountState } from './account';
export type { Account, AccountState } from './account';
export { MICROS_PER_CREDIT, MICROS_PER_DOLLAR, isMicros, mulDivCeil, mulDivFloor } from './money';
export { utf8ByteLength } from './utf8-byte-length';
export { concatBytes } from './concat-bytes';
export { BODY_READER, bodyReader, readWhenReadable } from './body-reader';
export type { BodyReader, BodyReadResult } from './body-reader';
export { BODY_SOURCE, bodySource, LEAN_REPLY, leanReply } from './body-source';
export type { BodySource, ByteSink, LazyBody, LeanReply } from './body-source';
export { err, ok } from './result';
export type { Refusal, Result } from './result';
export { systemTimers } from './timers';
export type { Timers } from './timers';
export { withinDeadline } from './within-deadline';
export { hasControlCharacter } from './has-control-character';
export type { DeadlineMissed, WithinDeadlineOptions } from './within-deadline';
export { MODEL_RECORD_FIELDS, modelRoutes, toModelRecord } from './models';
export type {
  ChatModelConfig,
  ChatPrice,
  ImageModelConfig,
  ImagePrice,
  ModelConfig,
  ModelConfigBase,
  ModelRecord,
  ModelRoute,
  ModelType,
  SearchModelConfig,
} from './models';
export type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatRequest,
  ChatTool,
  ContentPart,
  FilePart,
  FinishReason,
  ImagePart,
  OtherPart,
  ReasoningEffort,
  TextPart,
  ToolCall,
  ToolCallDelta,
  ToolChoice,
  Usage,
} from './chat';
export type {
  ResponseContentPart,
  ResponseEcho,
  ResponseFunctionCallItem,
  ResponseFunctionTool,
  ResponseItemStatus,
  ResponseMessageItem,
  ResponseObject,
  ResponseOutputItem,
  ResponseOutputText,
  ResponseStatus,
  ResponseStreamEvent,
  ResponseTextFormat,
  ResponseToolChoice,
  ResponseUsage,
} from './responses';
export type { ResponseFormat } from './chat';
