/** The plans, lowest first. */
export const PLAN_NAMES = ['free', 'plus', 'pro', 'max'] as const;

/** A plan name. */
export type Plan = (typeof PLAN_NAMES)[number];

/** The limits a plan sets for all of an account's keys and its owner's app use together. */
export interface PlanLimits {
  /** Requests a minute, admitted at an even pace of this figure / 60 per second. */
  requestsPerMinute: number;
  /** Requests an idle account may send at once: 1 + a tenth of requests a minute. */
  burst: number;
  /** Requests in flight at once (chat, images, search, fetch). */
  inFlight: number;
}

/** The spec's per-plan limits. */
export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { requestsPerMinute: 60, burst: 7, inFlight: 2 },
  plus: { requestsPerMinute: 120, burst: 13, inFlight: 4 },
  pro: { requestsPerMinute: 600, burst: 61, inFlight: 10 },
  max: { requestsPerMinute: 600, burst: 61, inFlight: 10 },
};

/** Fixed per-account limits, the same on every plan (requests a minute). */
export const ENDPOINT_LIMITS = { models: 60, search: 30, fetch: 30 } as const;

/** Whether a string names a plan. */
export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLAN_NAMES as readonly string[]).includes(value);
}

/** Whether an account on `plan` may use a model whose lowest plan is `required`. */
export function planAllows(plan: Plan, required: Plan): boolean {
  return PLAN_NAMES.indexOf(plan) >= PLAN_NAMES.indexOf(required);
}
