/**
 * Leak and ledger checks for gateway tests (not exported): after a test, the gateway finished every
 * request, closed every upstream body, cleared its timers and slots, holds nothing, and the balance
 * is the sum of the ledger.
 */
import { expect } from 'vitest';
import type { TestGateway } from './test-harness';

/**
 * Waits for the gateway to finish every request, failing (not hanging) when it does not within `ms`
 * of real time (5 s by default: generous, as a busy machine may stall this process for a while).
 */
export async function settled(t: Pick<TestGateway, 'gateway'>, ms = 5_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)));
  const result = await Promise.race([t.gateway.idle().then(() => 'idle' as const), timeout]);
  clearTimeout(timer);
  expect(result, `gateway.active stayed at ${t.gateway.active}`).toBe('idle');
}

/** The ledger invariant: the account's balance is the sum of its entries. */
export async function expectLedgerAddsUp(t: TestGateway): Promise<void> {
  const { balance } = await t.balance();
  const entries = await t.store.entries(t.accountId);
  expect(entries.reduce((sum, entry) => sum + entry.micros, 0)).toBe(balance);
}

/** Once the gateway is idle: the account holds nothing and the ledger adds up. */
export async function expectBooksBalanced(t: TestGateway): Promise<void> {
  expect((await t.balance()).held).toBe(0);
  await expectLedgerAddsUp(t);
}

/**
 * Once the gateway is idle: no request active, no upstream body open, none of `time`'s timers
 * armed, no slot in flight, nothing held, and the ledger adds up.
 */
export async function expectNothingLeft(t: TestGateway, time: { readonly pending: number }): Promise<void> {
  expect(t.gateway.active).toBe(0);
  expect(t.fake.open).toBe(0);
  expect(time.pending).toBe(0);
  expect(await t.inFlight()).toBe(0);
  await expectBooksBalanced(t);
}

/** The account's charge entries, oldest first. */
export async function charges(t: TestGateway) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge').reverse();
}
