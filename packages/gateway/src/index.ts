export { createGateway } from './create-gateway';
export type { Gateway } from './create-gateway';
export type { AppPrincipal, GatewayOptions, GatewayTimers, Principal, RequestLog } from './gateway-options';
