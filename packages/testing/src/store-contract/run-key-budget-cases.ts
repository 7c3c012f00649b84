/**
 * The key budget part of the Store contract (issue #19), run by `runStoreCases` inside its own
 * `describe`, on its store factory and injected clock: a key's charges in its budget's period plus
 * its open holds never pass the budget, whatever the concurrency, and the store's spend counter is
 * always the sum of the key's charges in the period.
 */
import { expect, it } from 'vitest';
import type { Balance, HoldResult, KeyBudgetStatus, Store } from '@tollgate/billing';

/** What the key budget cases take from `runStoreCases`. */
export interface KeyBudgetCaseContext {
  /** Runs `run` on a fresh store (the clock reset to the suite's start), closing it afterwards. */
  withStore(
    run: (context: { store: Store; invariant: (accountId: string) => Promise<Balance>; funded: (micros: number) => Promise<string> }) => Promise<void>,
  ): Promise<void>;
  /** The injected clock, unix milliseconds. */
  clock: { get(): number; set(ms: number): void };
}

const TTL = 3_600_000;
const DAY = 86_400_000;

/** The hold's value, or a failure naming the refusal. */
function placed(result: HoldResult) {
  if (!result.ok) throw new Error(`hold refused: ${JSON.stringify(result.error)}`);
  return result.value;
}

/** Registers the key budget cases. */
export function runKeyBudgetCases({ withStore, clock }: KeyBudgetCaseContext): void {
  const hold = (store: Store, accountId: string, keyId: string | undefined, micros: number, minimum?: number, ttlMs = TTL) =>
    store.hold(accountId, { micros, ttlMs, ...(minimum === undefined ? {} : { minimum }), ...(keyId === undefined ? {} : { keyId }) });
  /** Holds and settles `micros` on the key: one charge entry. */
  const charge = async (store: Store, accountId: string, keyId: string | undefined, micros: number) => {
    const { holdId } = placed(await hold(store, accountId, keyId, micros));
    await store.settle(holdId, { micros });
  };
  /** The key's budget as the store shows it, checked against the ledger: spent = the key's charges since the period's start. */
  const budgetOf = async (store: Store, accountId: string, keyId: string): Promise<KeyBudgetStatus | undefined> => {
    const key = await store.getKey(keyId);
    const budget = key?.budget;
    if (budget !== undefined) {
      const charged = (await store.entries(accountId))
        .filter((entry) => entry.kind === 'charge' && entry.keyId === keyId && entry.createdAt >= budget.periodStart)
        .reduce((sum, entry) => sum - entry.micros, 0);
      expect(budget.spent).toBe(charged);
    }
    return budget;
  };
  const refusedByKey = (available: number) => ({ ok: false, error: { code: 'insufficient_balance', reason: 'key_budget', available } });
  const refusedByBalance = (available: number) => ({ ok: false, error: { code: 'insufficient_balance', reason: 'balance', available } });

  it('key budget: admits holds up to the budget and refuses past it; settles, releases and other keys count as they should', () =>
    withStore(async ({ store, invariant, funded }) => {
      const id = await funded(10_000);
      const dayStart = Math.floor(clock.get() / DAY) * DAY;
      const { id: key } = await store.createKey(id, 'limited');
      const { id: free } = await store.createKey(id, 'unlimited');
      const set = await store.setKeyBudget(key, { micros: 1_000, period: 'day' });
      expect(set).toMatchObject({ id: key, name: 'limited', accountId: id });
      expect(set.budget).toEqual({ micros: 1_000, period: 'day', spent: 0, periodStart: dayStart });
      expect((await store.getKey(key))?.budget).toEqual(set.budget);
      expect((await store.listKeys(id)).map((info) => info.budget)).toEqual([set.budget, undefined]);
      expect((await store.getKey(free))?.budget).toBeUndefined();

      const first = placed(await hold(store, id, key, 600));
      expect(first.micros).toBe(600);
      // Past the budget: refused, saying so and what the budget has left; the balance had plenty.
      expect(await hold(store, id, key, 401)).toEqual(refusedByKey(400));
      const second = placed(await hold(store, id, key, 400));
      expect(await hold(store, id, key, 1)).toEqual(refusedByKey(0));
      expect(await hold(store, id, key, 1, 0)).toEqual(refusedByKey(0));
      // A free request still fits a budget held to the micro (as it fits a zero balance).
      expect(await hold(store, id, key, 0)).toMatchObject({ ok: true, value: { micros: 0 } });
      // Other keys of the account, and requests without a key, are limited by the balance only.
      placed(await hold(store, id, free, 5_000));
      placed(await hold(store, id, undefined, 2_000));
      expect(await invariant(id)).toEqual({ balance: 10_000, held: 8_000, available: 2_000 });
      // A release frees its part of the budget at once.
      expect(await store.release(second.holdId)).toEqual({ charged: 0, already: false });
      expect(await hold(store, id, key, 401)).toEqual(refusedByKey(400));
      const third = placed(await hold(store, id, key, 400));
      // A settle below the hold frees the difference: 600 held, 250 charged.
      await store.settle(first.holdId, { micros: 250 });
      expect((await budgetOf(store, id, key))?.spent).toBe(250);
      expect(await hold(store, id, key, 351)).toEqual(refusedByKey(350));
      const fourth = placed(await hold(store, id, key, 350));
      await store.settle(third.holdId, { micros: 400 });
      await store.settle(fourth.holdId, { micros: 0 });
      expect((await budgetOf(store, id, key))?.spent).toBe(650);
      expect(await hold(store, id, key, 351)).toEqual(refusedByKey(350));
      // Charges of other keys and of no key never count against this key.
      await charge(store, id, undefined, 100);
      expect((await budgetOf(store, id, key))?.spent).toBe(650);
      // A settle past its hold (a store accepts it) takes the key past its budget: then even a free request of the key is refused.
      const over = placed(await hold(store, id, key, 350));
      await store.settle(over.holdId, { micros: 500 });
      expect((await budgetOf(store, id, key))?.spent).toBe(1_150);
      expect(await hold(store, id, key, 0, 0)).toEqual(refusedByKey(-150));
      // Raising the budget keeps what was spent; clearing it leaves the balance as the only limit.
      expect((await store.setKeyBudget(key, { micros: 2_000, period: 'day' })).budget).toEqual({
        micros: 2_000,
        period: 'day',
        spent: 1_150,
        periodStart: dayStart,
      });
      expect(await hold(store, id, key, 851)).toEqual(refusedByKey(850));
      const cleared = await store.setKeyBudget(key, null);
      expect(cleared.budget).toBeUndefined();
      expect((await store.getKey(key))?.budget).toBeUndefined();
      const balance = await invariant(id);
      expect(await hold(store, id, key, balance.available)).toMatchObject({ ok: true, value: { micros: balance.available } });

      // The budget is checked before anything is written: a malformed one, or an unknown key, throws.
      for (const bad of [
        { micros: -1, period: 'day' },
        { micros: 1.5, period: 'day' },
        { micros: 10, period: 'week' },
        { micros: Number.NaN, period: 'total' },
      ]) {
        await expect(store.setKeyBudget(key, bad as never)).rejects.toThrow();
      }
      await expect(store.setKeyBudget('key_missing', { micros: 1, period: 'day' })).rejects.toThrow();
      expect((await store.getKey(key))?.budget).toBeUndefined();
      // A revoked key may still be given a budget (as it may be renamed).
      await store.revokeKey(free);
      expect((await store.setKeyBudget(free, { micros: 0, period: 'total' })).budget).toEqual({ micros: 0, period: 'total', spent: 0, periodStart: 0 });
      // A hold naming a key of another account is a caller's bug: refused loudly.
      const other = await funded(1_000);
      await expect(hold(store, other, free, 1)).rejects.toThrow();
      await invariant(id);
    }));

  it('key budget: a partial hold takes the smaller of the balance and the budget left; the balance is checked first', () =>
    withStore(async ({ store, invariant, funded }) => {
      const poor = await funded(500);
      const { id: rich } = await store.createKey(poor, 'big budget');
      await store.setKeyBudget(rich, { micros: 1_000, period: 'month' });
      expect(await hold(store, poor, rich, 600)).toEqual(refusedByBalance(500));
      expect(placed(await hold(store, poor, rich, 900, 100)).micros).toBe(500);
      expect(await hold(store, poor, rich, 10, 1)).toEqual(refusedByBalance(0));
      await invariant(poor);

      const id = await funded(10_000);
      const { id: key } = await store.createKey(id, 'small budget');
      await store.setKeyBudget(key, { micros: 700, period: 'month' });
      // Lowered to the budget left, as it is lowered to the balance.
      const clamped = placed(await hold(store, id, key, 1_000, 300));
      expect(clamped.micros).toBe(700);
      expect(await hold(store, id, key, 100, 1)).toEqual(refusedByKey(0));
      await store.settle(clamped.holdId, { micros: 200 });
      expect(placed(await hold(store, id, key, 1_000, 1)).micros).toBe(500);
      expect(await hold(store, id, key, 5, 0)).toEqual(refusedByKey(0));
      // Below the minimum: refused, not lowered.
      await store.setKeyBudget(key, { micros: 999, period: 'month' });
      expect(await hold(store, id, key, 1_000, 300)).toEqual(refusedByKey(299));
      expect(placed(await hold(store, id, key, 1_000, 299)).micros).toBe(299);
      expect(await invariant(id)).toEqual({ balance: 9_800, held: 799, available: 9_001 });
      expect((await budgetOf(store, id, key))?.spent).toBe(200);
    }));

  it('key budget: a day or month budget starts again on the UTC boundary; a total one never does', () =>
    withStore(async ({ store, invariant, funded }) => {
      const id = await funded(1_000_000);
      const { id: daily } = await store.createKey(id, 'daily');
      const { id: monthly } = await store.createKey(id, 'monthly');
      const { id: total } = await store.createKey(id, 'total');
      const JAN31 = Date.UTC(2024, 0, 31);
      const FEB1 = Date.UTC(2024, 1, 1);
      clock.set(Date.UTC(2024, 0, 15, 12));
      await store.setKeyBudget(daily, { micros: 1_000, period: 'day' });
      await store.setKeyBudget(monthly, { micros: 2_000, period: 'month' });
      await store.setKeyBudget(total, { micros: 1_000, period: 'total' });
      await charge(store, id, monthly, 1_500);
      await charge(store, id, total, 600);

      clock.set(JAN31 + 10 * 3_600_000);
      await charge(store, id, daily, 800);
      expect(await hold(store, id, daily, 201)).toEqual(refusedByKey(200));
      clock.set(FEB1 - 1);
      expect(await hold(store, id, daily, 201)).toEqual(refusedByKey(200));
      await charge(store, id, monthly, 500);
      expect(await hold(store, id, monthly, 1)).toEqual(refusedByKey(0));
      // Open across the boundary: it still counts after it (it will be charged in the new period).
      const late = placed(await hold(store, id, daily, 150));
      expect((await budgetOf(store, id, daily))?.spent).toBe(800);

      clock.set(FEB1);
      // The first millisecond of the new UTC day and month: spent reads 0 before anything is charged.
      expect(await budgetOf(store, id, daily)).toEqual({ micros: 1_000, period: 'day', spent: 0, periodStart: FEB1 });
      expect(await budgetOf(store, id, monthly)).toEqual({ micros: 2_000, period: 'month', spent: 0, periodStart: FEB1 });
      expect(await hold(store, id, daily, 851)).toEqual(refusedByKey(850));
      expect(placed(await hold(store, id, monthly, 2_000)).micros).toBe(2_000);
      // The hold from the day before is charged today: the counter starts again from it, not from yesterday's 800.
      await store.settle(late.holdId, { micros: 100 });
      expect((await budgetOf(store, id, daily))?.spent).toBe(100);
      await charge(store, id, daily, 900);
      expect((await budgetOf(store, id, daily))?.spent).toBe(1_000);
      expect(await hold(store, id, daily, 1)).toEqual(refusedByKey(0));
      clock.set(FEB1 + DAY - 1);
      expect(await hold(store, id, daily, 1)).toEqual(refusedByKey(0));
      clock.set(FEB1 + DAY);
      expect(placed(await hold(store, id, daily, 1_000)).micros).toBe(1_000);

      // A total budget counts every charge of the key, whenever it was.
      await charge(store, id, total, 400);
      clock.set(Date.UTC(2024, 2, 1));
      expect(await budgetOf(store, id, total)).toEqual({ micros: 1_000, period: 'total', spent: 1_000, periodStart: 0 });
      expect(await hold(store, id, total, 1)).toEqual(refusedByKey(0));

      // Setting or changing a budget counts the key's charges of the current period from the ledger.
      clock.set(Date.UTC(2024, 2, 5, 23));
      await charge(store, id, daily, 300);
      clock.set(Date.UTC(2024, 2, 6, 1));
      await charge(store, id, daily, 200);
      expect((await store.setKeyBudget(daily, { micros: 5_000, period: 'day' })).budget?.spent).toBe(200);
      expect((await store.setKeyBudget(daily, { micros: 5_000, period: 'month' })).budget?.spent).toBe(500);
      expect((await store.setKeyBudget(daily, { micros: 5_000, period: 'total' })).budget?.spent).toBe(2_300);
      await store.setKeyBudget(daily, null);
      // Charges made while the key had no budget count once it has one again.
      await charge(store, id, daily, 50);
      expect((await store.setKeyBudget(daily, { micros: 5_000, period: 'day' })).budget?.spent).toBe(250);
      await budgetOf(store, id, daily);
      await invariant(id);
    }));

  it('key budget: checkpoint charges count; an expired hold stops counting', () =>
    withStore(async ({ store, invariant, funded }) => {
      const { checkpoint } = store;
      if (checkpoint === undefined) throw new Error('the store has no checkpoint method');
      const id = await funded(10_000);
      const { id: key } = await store.createKey(id, 'streams');
      await store.setKeyBudget(key, { micros: 1_000, period: 'total' });
      const stream = placed(await hold(store, id, key, 800, undefined, 1_000));
      const quiet = placed(await hold(store, id, key, 200, undefined, 1_000));
      expect(await hold(store, id, key, 1)).toEqual(refusedByKey(0));
      await checkpoint.call(store, [{ holdId: stream.holdId, micros: 300, ttlMs: 1_000 }]);
      clock.set(clock.get() + 1_000);
      expect(await store.releaseExpired()).toBe(2);
      expect(await budgetOf(store, id, key)).toEqual({ micros: 1_000, period: 'total', spent: 300, periodStart: 0 });
      expect(await hold(store, id, key, 701)).toEqual(refusedByKey(700));
      placed(await hold(store, id, key, 700));
      // The expired hold without a checkpoint charged nothing; settled after all, it counts once.
      await store.settle(quiet.holdId, { micros: 50 });
      expect((await budgetOf(store, id, key))?.spent).toBe(350);
      await invariant(id);
    }));

  it('key budget: 50 simultaneous holds of one key never hold past its budget, and its holds and settles racing never spend past it', () =>
    withStore(async ({ store, invariant, funded }) => {
      const id = await funded(1_000_000);
      const { id: key } = await store.createKey(id, 'busy');
      const { id: neighbour } = await store.createKey(id, 'neighbour');
      await store.setKeyBudget(key, { micros: 1_000, period: 'day' });
      const [limited, unlimited] = await Promise.all([
        Promise.all(Array.from({ length: 50 }, () => hold(store, id, key, 70))),
        Promise.all(Array.from({ length: 50 }, () => hold(store, id, neighbour, 70))),
      ]);
      expect(limited.filter((result) => result.ok)).toHaveLength(14);
      for (const result of limited) if (!result.ok) expect(result.error).toMatchObject({ reason: 'key_budget' });
      expect(unlimited.every((result) => result.ok)).toBe(true);

      // Partial holds: the budget's last micros go to one lowered hold.
      const { id: partial } = await store.createKey(id, 'partial');
      await store.setKeyBudget(partial, { micros: 1_005, period: 'day' });
      const amounts = (await Promise.all(Array.from({ length: 50 }, () => hold(store, id, partial, 50, 1)))).flatMap((result) =>
        result.ok ? [result.value.micros] : [],
      );
      expect(amounts.reduce((sum, micros) => sum + micros, 0)).toBe(1_005);
      expect(amounts.filter((micros) => micros !== 50)).toEqual([5]);

      // Each request holds then settles what it held: the counter must keep up with the settles.
      const { id: racing } = await store.createKey(id, 'racing');
      await store.setKeyBudget(racing, { micros: 1_000, period: 'month' });
      const settled = await Promise.all(
        Array.from({ length: 50 }, async (): Promise<number> => {
          const result = await hold(store, id, racing, 100);
          if (!result.ok) return 0;
          await store.settle(result.value.holdId, { micros: 100 });
          return 100;
        }),
      );
      expect(settled.reduce((sum, micros) => sum + micros, 0)).toBe(1_000);
      expect((await budgetOf(store, id, racing))?.spent).toBe(1_000);
      expect(await hold(store, id, racing, 1)).toEqual(refusedByKey(0));
      await invariant(id);
    }));
}
