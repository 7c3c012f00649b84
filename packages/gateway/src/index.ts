export { createGateway } from './create-gateway';
export type { Gateway } from './create-gateway';
export type { AppPrincipal, GatewayOptions, Principal, RequestLog } from './gateway-options';
