export { generateKey, isServiceKey } from './generate-key';
export { hashKey } from './hash-key';
export { memoryStore } from './memory-store';
export { isKeyBudgetPeriod, KEY_BUDGET_PERIODS } from './key-budget';
export { DEFAULT_PAGE_LIMIT, InvalidCursorError, MAX_PAGE_LIMIT } from './page-cursor';
export { MAX_IDEMPOTENCY_KEY_LENGTH, USAGE_PERIOD_MS } from './usage-rules';
export { DEFAULT_IMAGE_TOKEN_BOUND } from './measure-prompt';
export { MESSAGE_OVERHEAD_TOKENS, promptTokenBound } from './prompt-token-bound';
export { ESTIMATED_MESSAGE_TOKENS, estimatePromptTokens } from './estimate-prompt-tokens';
export { chatHoldMicros } from './chat-hold-micros';
export { outputLimitForHold } from './output-limit-for-hold';
export { chatCostMicros } from './chat-cost-micros';
export type { ChatUsage } from './chat-cost-micros';
export { imageCostMicros } from './image-cost-micros';
export { estimateCompletionTokens } from './estimate-completion-tokens';
export { createCompletionTokenCounter } from './completion-token-counter';
export type { CompletionTokenCounter } from './completion-token-counter';
export { validateModelPrices } from './validate-model-prices';
export type {
  Balance,
  CreatedKey,
  Credited,
  CreditInput,
  Directory,
  Hold,
  HoldCheckpoint,
  HoldInput,
  HoldResult,
  IdempotencyConflict,
  InsufficientBalance,
  KeyBudget,
  KeyBudgetPeriod,
  KeyBudgetStatus,
  KeyInfo,
  KeyRecord,
  Ledger,
  LedgerEntry,
  Page,
  PageOptions,
  SettleInput,
  SettleResult,
  Store,
  StoreOptions,
  UsageQuery,
  UsageRow,
} from './store';
