export { createGateway, DEFAULT_STREAM_IDLE_TIMEOUT_MS } from './create-gateway';
export type { Gateway } from './create-gateway';
export type { AppPrincipal, GatewayOptions, Principal, RequestLog } from './gateway-options';
export { ADMIN_BASE_PATH, createAdminApi } from './admin-api';
export type { AdminApi, AdminApiOptions } from './admin-api';
export { createAdminActions, isIdempotencyKey } from './admin-actions';
export type { AdminActions, AdminActionsOptions, AdminCreatedKey, AdminCredit, AdminRefusal, AdminResult, AdminUsageQuery } from './admin-actions';
export type {
  BalanceLowEvent,
  BalanceNegativeEvent,
  EventHook,
  GatewayEvent,
  GatewayEventType,
  KeyBudgetReachedEvent,
  KeyRevokedEvent,
} from './events';
