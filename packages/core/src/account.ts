import type { Plan } from './plans';

/** Account states; every one but `active` refuses requests with its own 403 code. */
export const ACCOUNT_STATES = ['active', 'disabled', 'deleted', 'under_18'] as const;

/** An account state. */
export type AccountState = (typeof ACCOUNT_STATES)[number];

/** An account: the owner of keys, credits and limits. */
export interface Account {
  /** Stable account id. */
  id: string;
  /** The account's plan, which sets its limits and the models it may use. */
  plan: Plan;
  /** The account's state. */
  state: AccountState;
}

/** Whether a string names an account state. */
export function isAccountState(value: unknown): value is AccountState {
  return typeof value === 'string' && (ACCOUNT_STATES as readonly string[]).includes(value);
}
