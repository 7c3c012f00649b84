/**
 * The Store contract suite: every store (memory, SQLite, PostgreSQL) runs it with
 * `runStoreCases(label, make)`. `make` gets the injected clock; it may also return `dump()`, the
 * store's raw data as text, so the suite can check that no key secret is stored.
 */
import { describe, expect, it } from 'vitest';
import { hashKey, isServiceKey, type Store } from '@tollgate/billing';
import { runKeyBudgetCases } from './run-key-budget-cases';

/** What a store factory hands the suite. */
export interface StoreCaseSetup {
  store: Store;
  cleanup?: () => Promise<void>;
  /** Everything the store keeps, as text (rows, file bytes), for the "secret never stored" check. */
  dump?: () => Promise<string>;
}

const START = 1_700_000_000_000;
const TTL = 60_000;

/** Runs the Store contract against a store factory. */
export function runStoreCases(label: string, make: (options: { now: () => number }) => Promise<StoreCaseSetup>): void {
  describe(`store contract: ${label}`, () => {
    let time = START;
    const now = () => time;

    async function setup() {
      time = START;
      const made = await make({ now });
      const { store } = made;
      /** balance = sum of entries, and available = balance - held, checked after every step. */
      const invariant = async (accountId: string) => {
        const [balance, entries] = await Promise.all([store.getBalance(accountId), store.entries(accountId)]);
        expect(balance.balance).toBe(entries.reduce((sum, entry) => sum + entry.micros, 0));
        expect(balance.available).toBe(balance.balance - balance.held);
        return balance;
      };
      const funded = async (micros: number, plan: 'free' | 'plus' = 'free') => {
        const account = await store.createAccount({ plan });
        if (micros > 0) await store.addCredits(account.id, micros);
        return account.id;
      };
      return { ...made, invariant, funded };
    }

    async function withStore(run: (context: Awaited<ReturnType<typeof setup>>) => Promise<void>) {
      const context = await setup();
      try {
        await run(context);
      } finally {
        await context.store.close?.();
        await context.cleanup?.();
      }
    }

    it('creates accounts, sets states and plans', () =>
      withStore(async ({ store }) => {
        const account = await store.createAccount({ plan: 'plus' });
        expect(account).toEqual({ id: account.id, plan: 'plus', state: 'active' });
        expect(account.id).toMatch(/^acc_[A-Za-z0-9]{20}$/);
        expect(await store.getAccount(account.id)).toEqual(account);
        expect(await store.getAccount('acc_missing')).toBeUndefined();
        const named = await store.createAccount({ plan: 'free', id: 'acc_fixed' });
        expect(named).toEqual({ id: 'acc_fixed', plan: 'free', state: 'active' });
        await expect(store.createAccount({ plan: 'free', id: 'acc_fixed' })).rejects.toThrow();
        for (const state of ['disabled', 'deleted', 'under_18', 'active'] as const) {
          expect(await store.setAccountState(account.id, state)).toEqual({ id: account.id, plan: 'plus', state });
          expect((await store.getAccount(account.id))?.state).toBe(state);
        }
        expect(await store.setPlan(account.id, 'max')).toEqual({ id: account.id, plan: 'max', state: 'active' });
        expect(await store.getAccount(account.id)).toEqual({ id: account.id, plan: 'max', state: 'active' });
        await expect(store.setAccountState('acc_missing', 'disabled')).rejects.toThrow();
        await expect(store.setPlan('acc_missing', 'pro')).rejects.toThrow();
        expect(await store.getBalance(account.id)).toEqual({ balance: 0, held: 0, available: 0 });
      }));

    it('creates keys, stores only their hash, lists and revokes them', () =>
      withStore(async ({ store, dump }) => {
        const account = await store.createAccount({ plan: 'plus' });
        const other = await store.createAccount({ plan: 'free' });
        const created = await store.createKey(account.id, 'laptop');
        expect(isServiceKey(created.key)).toBe(true);
        expect(created.name).toBe('laptop');
        expect(created.id).toMatch(/^key_[A-Za-z0-9]{20}$/);
        time += 5;
        const second = await store.createKey(account.id, 'ci');
        await store.createKey(other.id, 'theirs');
        expect(second.key).not.toBe(created.key);

        const hash = await hashKey(created.key);
        expect(await store.findKey(hash)).toEqual({ id: created.id, name: 'laptop', account });
        expect(await store.findKey(created.key)).toBeUndefined();
        // One character off (never the same character: a key that ends in x would otherwise match).
        const offByOne = `${created.key.slice(0, -1)}${created.key.endsWith('x') ? 'y' : 'x'}`;
        expect(await store.findKey(await hashKey(offByOne))).toBeUndefined();

        const keys = await store.listKeys(account.id);
        expect(keys).toEqual([
          { id: created.id, name: 'laptop', accountId: account.id, prefix: created.key.slice(0, 11), createdAt: START },
          { id: second.id, name: 'ci', accountId: account.id, prefix: second.key.slice(0, 11), createdAt: START + 5 },
        ]);
        expect(keys[0]?.prefix).toMatch(/^sk_svc_[A-Za-z0-9]{4}$/);
        expect(JSON.stringify(keys)).not.toContain(created.key.slice(11));

        if (dump !== undefined) {
          const data = await dump();
          expect(data).toContain(hash);
          expect(data).not.toContain(created.key.slice(11));
          expect(data).not.toContain(second.key.slice(11));
        }

        // The account in a found key is the current one.
        await store.setAccountState(account.id, 'disabled');
        expect((await store.findKey(hash))?.account).toEqual({ id: account.id, plan: 'plus', state: 'disabled' });

        time += 10;
        await store.revokeKey(created.id);
        expect(await store.findKey(hash)).toBeUndefined();
        expect((await store.findKey(await hashKey(second.key)))?.id).toBe(second.id);
        time += 10;
        await store.revokeKey(created.id);
        const after = await store.listKeys(account.id);
        expect(after[0]).toEqual({
          id: created.id,
          name: 'laptop',
          accountId: account.id,
          prefix: created.key.slice(0, 11),
          createdAt: START,
          revokedAt: START + 15,
        });
        expect(after[1]?.revokedAt).toBeUndefined();
        expect((await store.listKeys(other.id)).map((key) => key.name)).toEqual(['theirs']);
        await expect(store.createKey('acc_missing', 'x')).rejects.toThrow();
      }));

    it('adds credits as entries and refuses malformed amounts', () =>
      withStore(async ({ store, invariant }) => {
        const account = await store.createAccount({ plan: 'free' });
        expect(await store.addCredits(account.id, 5_000_000, { note: 'welcome' })).toEqual({ balance: 5_000_000, held: 0, available: 5_000_000 });
        time += 1;
        expect(await store.addCredits(account.id, 1)).toEqual({ balance: 5_000_001, held: 0, available: 5_000_001 });
        const entries = await store.entries(account.id);
        expect(entries.map(({ micros, kind, createdAt }) => ({ micros, kind, createdAt }))).toEqual([
          { micros: 1, kind: 'credit', createdAt: START + 1 },
          { micros: 5_000_000, kind: 'credit', createdAt: START },
        ]);
        expect(entries[1]?.meta).toEqual({ note: 'welcome' });
        expect(entries[1]?.accountId).toBe(account.id);
        expect(entries[0]?.id).not.toBe(entries[1]?.id);
        expect(await store.entries(account.id, { limit: 1 })).toEqual([entries[0]]);
        for (const bad of [0, -5, 1.5, Number.NaN, 2 ** 53]) await expect(store.addCredits(account.id, bad)).rejects.toThrow();
        await expect(store.addCredits('acc_missing', 10)).rejects.toThrow();
        await expect(store.getBalance('acc_missing')).rejects.toThrow();
        expect((await invariant(account.id)).balance).toBe(5_000_001);
      }));

    it('holds exact amounts, partially down to the minimum, and refuses below it', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(1_000);
        const first = await store.hold(id, { micros: 600, ttlMs: TTL, requestId: 'req_1' });
        expect(first).toEqual({ ok: true, value: { holdId: expect.stringMatching(/^hold_/), micros: 600 } });
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 600, available: 400 });
        // All or nothing by default.
        expect(await store.hold(id, { micros: 401, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 400 },
        });
        // Partial: holds all of what is available when that is at least the minimum.
        const partial = await store.hold(id, { micros: 900, minimum: 300, ttlMs: TTL });
        expect(partial).toEqual({ ok: true, value: { holdId: expect.any(String), micros: 400 } });
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 1_000, available: 0 });
        expect(await store.hold(id, { micros: 5, minimum: 1, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 0 },
        });
        // Nothing available and a positive amount wanted: refused even with minimum 0.
        expect(await store.hold(id, { micros: 5, minimum: 0, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 0 },
        });
        // A free request (0 micros) holds nothing and passes while the balance is not negative.
        expect(await store.hold(id, { micros: 0, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 0 } });
        await store.release(first.ok ? first.value.holdId : '');
        expect(await store.hold(id, { micros: 601, minimum: 601, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 600 },
        });
        expect(await store.hold(id, { micros: 600, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 600 } });
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 1_000, available: 0 });
        for (const bad of [
          { micros: -1, ttlMs: TTL },
          { micros: 1.5, ttlMs: TTL },
          { micros: 10, minimum: 11, ttlMs: TTL },
          { micros: 10, ttlMs: 0 },
        ]) {
          await expect(store.hold(id, bad)).rejects.toThrow();
        }
        await expect(store.hold('acc_missing', { micros: 1, ttlMs: TTL })).rejects.toThrow();
      }));

    it('settles once, releases once, and lets the balance go negative, which refuses every hold', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(1_000);
        const hold = await store.hold(id, { micros: 300, ttlMs: TTL, requestId: 'req_a' });
        if (!hold.ok) throw new Error('hold refused');
        time += 7;
        expect(await store.settle(hold.value.holdId, { micros: 120, meta: { model: 'fast', prompt_tokens: 3 } })).toEqual({ charged: 120, already: false });
        expect(await invariant(id)).toEqual({ balance: 880, held: 0, available: 880 });
        const [charge] = await store.entries(id, { limit: 1 });
        expect(charge).toEqual({
          id: expect.any(String),
          accountId: id,
          micros: -120,
          kind: 'charge',
          createdAt: START + 7,
          holdId: hold.value.holdId,
          requestId: 'req_a',
          meta: { model: 'fast', prompt_tokens: 3 },
        });
        // A retried settle or a late release never charges again.
        expect(await store.settle(hold.value.holdId, { micros: 999 })).toEqual({ charged: 120, already: true });
        expect(await store.release(hold.value.holdId)).toEqual({ charged: 120, already: true });
        expect(await invariant(id)).toEqual({ balance: 880, held: 0, available: 880 });

        const released = await store.hold(id, { micros: 100, ttlMs: TTL });
        if (!released.ok) throw new Error('hold refused');
        expect(await store.release(released.value.holdId)).toEqual({ charged: 0, already: false });
        expect(await store.release(released.value.holdId)).toEqual({ charged: 0, already: true });
        expect(await store.settle(released.value.holdId, { micros: 50 })).toEqual({ charged: 0, already: true });
        expect(await invariant(id)).toEqual({ balance: 880, held: 0, available: 880 });
        expect((await store.entries(id)).length).toBe(2);

        // A zero charge is still an entry (the settled request shows in the usage history).
        const free = await store.hold(id, { micros: 10, ttlMs: TTL, requestId: 'req_free' });
        if (!free.ok) throw new Error('hold refused');
        expect(await store.settle(free.value.holdId, { micros: 0, requestId: 'req_free2' })).toEqual({ charged: 0, already: false });
        const [zero] = await store.entries(id, { limit: 1 });
        expect(zero).toMatchObject({ micros: 0, kind: 'charge', holdId: free.value.holdId, requestId: 'req_free2' });
        expect(Object.is(zero?.micros, -0)).toBe(false);

        // The provider reported more than was held: the account goes negative (documented overdraft).
        const big = await store.hold(id, { micros: 880, ttlMs: TTL });
        if (!big.ok) throw new Error('hold refused');
        expect(await store.settle(big.value.holdId, { micros: 1_000 })).toEqual({ charged: 1_000, already: false });
        expect(await invariant(id)).toEqual({ balance: -120, held: 0, available: -120 });
        expect(await store.hold(id, { micros: 0, minimum: 0, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: -120 },
        });
        expect(await store.hold(id, { micros: 10, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: -120 },
        });
        expect(await store.addCredits(id, 120)).toEqual({ balance: 0, held: 0, available: 0 });
        expect(await store.hold(id, { micros: 0, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 0 } });
        expect(await store.hold(id, { micros: 1, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 0 },
        });
        await invariant(id);

        await expect(store.settle('hold_missing', { micros: 1 })).rejects.toThrow();
        await expect(store.release('hold_missing')).rejects.toThrow();
        const again = await store.hold(id, { micros: 0, ttlMs: TTL });
        if (!again.ok) throw new Error('hold refused');
        await expect(store.settle(again.value.holdId, { micros: -1 })).rejects.toThrow();
        await expect(store.settle(again.value.holdId, { micros: 0.5 })).rejects.toThrow();
      }));

    it('expires holds by the injected clock, and still settles an expired hold exactly once', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(1_000);
        const a = await store.hold(id, { micros: 400, ttlMs: 1_000 });
        const b = await store.hold(id, { micros: 500, ttlMs: 2_000 });
        if (!a.ok || !b.ok) throw new Error('hold refused');
        time += 999;
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 900, available: 100 });
        expect(await store.releaseExpired()).toBe(0);
        time += 1;
        // Expired holds stop counting at once, before any sweep.
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 500, available: 500 });
        expect(await store.hold(id, { micros: 500, ttlMs: 1_000 })).toMatchObject({ ok: true, value: { micros: 500 } });
        expect(await store.releaseExpired()).toBe(1);
        expect(await store.releaseExpired()).toBe(0);
        // The request of an expired hold finished after all: it is charged, once.
        expect(await store.settle(a.value.holdId, { micros: 350 })).toEqual({ charged: 350, already: false });
        expect(await store.settle(a.value.holdId, { micros: 350 })).toEqual({ charged: 350, already: true });
        expect(await invariant(id)).toEqual({ balance: 650, held: 1_000, available: -350 });
        time += 1_000;
        // b expired without a sweep: settle still charges once; release afterwards is a no-op.
        expect(await store.settle(b.value.holdId, { micros: 20 })).toEqual({ charged: 20, already: false });
        expect(await store.release(b.value.holdId)).toEqual({ charged: 20, already: true });
        expect(await invariant(id)).toEqual({ balance: 630, held: 0, available: 630 });
        expect(await store.releaseExpired()).toBe(1);
        expect((await store.entries(id)).filter((entry) => entry.kind === 'charge').map((entry) => entry.micros)).toEqual([-20, -350]);
      }));

    it('releases an expired hold once: release wins over a later settle', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(100);
        const hold = await store.hold(id, { micros: 100, ttlMs: 10 });
        if (!hold.ok) throw new Error('hold refused');
        time += 10;
        expect(await store.releaseExpired()).toBe(1);
        expect(await store.release(hold.value.holdId)).toEqual({ charged: 0, already: false });
        expect(await store.settle(hold.value.holdId, { micros: 100 })).toEqual({ charged: 0, already: true });
        expect(await invariant(id)).toEqual({ balance: 100, held: 0, available: 100 });
      }));

    /** The store's checkpoint method: every store of this repository has one. */
    const checkpointOf = (store: Store) => {
      const { checkpoint } = store;
      if (checkpoint === undefined) throw new Error('the store has no checkpoint method');
      return checkpoint.bind(store);
    };

    it('checkpoints what a stream delivered: raised, never lowered, never above the hold, open holds only', () =>
      withStore(async ({ store, invariant, funded }) => {
        const checkpoint = checkpointOf(store);
        const id = await funded(1_000);
        const a = await store.hold(id, { micros: 500, ttlMs: 1_000, requestId: 'req_cp' });
        const b = await store.hold(id, { micros: 300, ttlMs: 1_000 });
        const settled = await store.hold(id, { micros: 100, ttlMs: 1_000 });
        if (!a.ok || !b.ok || !settled.ok) throw new Error('hold refused');
        await store.settle(settled.value.holdId, { micros: 40 });
        expect(await checkpoint([])).toBe(0);
        // One batch for several streams; a closed hold and an unknown one are skipped.
        expect(
          await checkpoint([
            { holdId: a.value.holdId, micros: 120, ttlMs: 1_000 },
            { holdId: b.value.holdId, micros: 5_000, ttlMs: 1_000 },
            { holdId: settled.value.holdId, micros: 90, ttlMs: 1_000 },
            { holdId: 'hold_missing', micros: 1, ttlMs: 1_000 },
          ]),
        ).toBe(2);
        // Lower than recorded: kept at the higher amount.
        expect(await checkpoint([{ holdId: a.value.holdId, micros: 80, ttlMs: 1_000 }])).toBe(1);
        // A malformed entry refuses the whole batch, before anything is written.
        for (const bad of [-1, 1.5, Number.NaN]) {
          await expect(
            checkpoint([
              { holdId: a.value.holdId, micros: 400, ttlMs: 1_000 },
              { holdId: b.value.holdId, micros: bad, ttlMs: 1_000 },
            ]),
          ).rejects.toThrow();
        }
        await expect(checkpoint([{ holdId: a.value.holdId, micros: 400, ttlMs: 0 }])).rejects.toThrow();
        // Checkpoints hold no money of their own: what is held is still the holds.
        expect(await invariant(id)).toEqual({ balance: 960, held: 800, available: 160 });

        time += 1_000;
        expect(await store.releaseExpired()).toBe(2);
        expect(await store.releaseExpired()).toBe(0);
        const charges = (await store.entries(id)).filter((entry) => entry.kind === 'charge');
        // One charge per checkpointed hold, in the sweep's order (which one first is the store's business).
        expect(charges).toHaveLength(3);
        for (const entry of charges.slice(0, 2)) expect(entry).toMatchObject({ kind: 'charge', meta: { outcome: 'checkpoint' }, createdAt: START + 1_000 });
        expect(
          charges
            .filter((entry) => entry.meta?.outcome === 'checkpoint')
            .map((entry) => [entry.holdId, entry.micros, entry.requestId])
            .sort(),
        ).toEqual(
          [
            [a.value.holdId, -120, 'req_cp'],
            [b.value.holdId, -300, undefined],
          ].sort(),
        );
        // Charged by the sweep: a settle or release after it is `already`, and charges nothing more.
        expect(await store.settle(a.value.holdId, { micros: 450 })).toEqual({ charged: 120, already: true });
        expect(await store.release(b.value.holdId)).toEqual({ charged: 300, already: true });
        expect(await checkpoint([{ holdId: a.value.holdId, micros: 490, ttlMs: 1_000 }])).toBe(0);
        expect(await invariant(id)).toEqual({ balance: 540, held: 0, available: 540 });
        expect(await store.entries(id)).toHaveLength(4);
      }));

    it('keeps a checkpointed hold while its stream delivers, and charges it its checkpoint once it expires', () =>
      withStore(async ({ store, invariant, funded }) => {
        const checkpoint = checkpointOf(store);
        const id = await funded(1_000);
        const live = await store.hold(id, { micros: 600, ttlMs: 1_000 });
        if (!live.ok) throw new Error('hold refused');
        time += 900;
        // Checkpointed with a TTL: it lives 1,000 ms from now, past its first expiry.
        expect(await checkpoint([{ holdId: live.value.holdId, micros: 10, ttlMs: 1_000 }])).toBe(1);
        time += 500;
        expect(await store.releaseExpired()).toBe(0);
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 600, available: 400 });
        // A shorter TTL never shortens it.
        expect(await checkpoint([{ holdId: live.value.holdId, micros: 20, ttlMs: 1 }])).toBe(1);
        time += 499;
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 600, available: 400 });
        time += 1;
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 0, available: 1_000 });
        expect(await store.releaseExpired()).toBe(1);
        expect(await invariant(id)).toEqual({ balance: 980, held: 0, available: 980 });
        expect(await store.settle(live.value.holdId, { micros: 30 })).toEqual({ charged: 20, already: true });
      }));

    it('never brings back a hold whose expiry passed: a late checkpoint skips it, so its money is not held twice', () =>
      withStore(async ({ store, invariant, funded }) => {
        const checkpoint = checkpointOf(store);
        const id = await funded(1_000);
        const late = await store.hold(id, { micros: 600, ttlMs: 100 });
        if (!late.ok) throw new Error('hold refused');
        expect(await checkpoint([{ holdId: late.value.holdId, micros: 50, ttlMs: 100 }])).toBe(1);
        // Expired, not yet swept: it no longer counts as held, so the same money is held again.
        time += 150;
        const next = await store.hold(id, { micros: 600, ttlMs: 1_000 });
        if (!next.ok) throw new Error('hold refused');
        // A renewal that comes too late (an instance that stalled past the TTL) records nothing.
        expect(await checkpoint([{ holdId: late.value.holdId, micros: 80, ttlMs: 1_000 }])).toBe(0);
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 600, available: 400 });
        // The sweep closes it at its last checkpoint; a later settle is `already`.
        expect(await store.releaseExpired()).toBe(1);
        expect(await store.settle(late.value.holdId, { micros: 500 })).toEqual({ charged: 50, already: true });
        expect(await invariant(id)).toEqual({ balance: 950, held: 600, available: 350 });
      }));

    it('charges a checkpointed hold once when its settle races the sweep', () =>
      withStore(async ({ store, invariant, funded }) => {
        const checkpoint = checkpointOf(store);
        const id = await funded(10_000);
        const holds: string[] = [];
        for (let index = 0; index < 10; index++) {
          const hold = await store.hold(id, { micros: 500, ttlMs: 1_000, requestId: `req_${index}` });
          if (!hold.ok) throw new Error('hold refused');
          holds.push(hold.value.holdId);
        }
        await checkpoint(holds.map((holdId) => ({ holdId, micros: 100, ttlMs: 1_000 })));
        time += 1_000;
        const [sweeps, settles] = await Promise.all([
          Promise.all([store.releaseExpired(), store.releaseExpired(), store.releaseExpired()]),
          Promise.all(holds.map((holdId) => store.settle(holdId, { micros: 250 }))),
        ]);
        const entries = await store.entries(id);
        for (const [index, holdId] of holds.entries()) {
          const charges = entries.filter((entry) => entry.holdId === holdId);
          expect(charges).toHaveLength(1);
          const settled = settles[index];
          // Either the settle won (charged its amount) or the sweep did (the checkpoint; the settle is `already`).
          expect(settled).toEqual(settled?.already ? { charged: 100, already: true } : { charged: 250, already: false });
          expect(charges[0]?.micros).toBe(-(settled?.charged ?? 0));
        }
        expect(sweeps.reduce((sum, count) => sum + count, 0)).toBe(settles.filter((result) => result.already).length);
        await invariant(id);
      }));

    it('never holds more than is available under 200 simultaneous holds', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(1_000);
        const results = await Promise.all(Array.from({ length: 200 }, () => store.hold(id, { micros: 7, ttlMs: TTL })));
        const held = results.reduce((sum, result) => sum + (result.ok ? result.value.micros : 0), 0);
        expect(results.filter((result) => result.ok).length).toBe(142);
        expect(held).toBe(994);
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 994, available: 6 });

        const other = await funded(1_005);
        const partial = await Promise.all(Array.from({ length: 200 }, () => store.hold(other, { micros: 10, minimum: 1, ttlMs: TTL })));
        const amounts = partial.filter((result) => result.ok).map((result) => (result.ok ? result.value.micros : 0));
        expect(amounts.length).toBe(101);
        expect(amounts.reduce((sum, micros) => sum + micros, 0)).toBe(1_005);
        expect(amounts.filter((micros) => micros !== 10)).toEqual([5]);
        expect(await invariant(other)).toEqual({ balance: 1_005, held: 1_005, available: 0 });
      }));

    it('charges a hold once under simultaneous settles and releases', () =>
      withStore(async ({ store, invariant, funded }) => {
        const id = await funded(1_000);
        const hold = await store.hold(id, { micros: 500, ttlMs: TTL });
        if (!hold.ok) throw new Error('hold refused');
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, index) =>
            index % 2 === 0 ? store.settle(hold.value.holdId, { micros: 100 + index }) : store.release(hold.value.holdId),
          ),
        );
        expect(results.filter((result) => !result.already).length).toBe(1);
        const winner = results.find((result) => !result.already);
        if (winner === undefined) throw new Error('no settle or release closed the hold');
        for (const result of results) expect(result.charged).toBe(winner.charged);
        expect(await invariant(id)).toEqual({ balance: 1_000 - winner.charged, held: 0, available: 1_000 - winner.charged });
        expect((await store.entries(id)).length).toBe(winner.charged === 0 ? 1 : 2);
      }));

    it('keeps each account to its own money', () =>
      withStore(async ({ store, invariant, funded }) => {
        const a = await funded(100);
        const b = await funded(50);
        expect(await store.hold(a, { micros: 100, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 100 } });
        expect(await store.hold(b, { micros: 60, ttlMs: TTL })).toEqual({
          ok: false,
          error: { code: 'insufficient_balance', reason: 'balance', available: 50 },
        });
        expect(await invariant(a)).toEqual({ balance: 100, held: 100, available: 0 });
        expect(await invariant(b)).toEqual({ balance: 50, held: 0, available: 50 });
        expect(await store.entries(b)).toHaveLength(1);
        expect(await store.entries('acc_nobody')).toEqual([]);
      }));

    /** The error a promise rejects with (the suite runs under Bun and Deno too: no `rejects` matchers on shapes). */
    const rejection = async (promise: Promise<unknown>): Promise<unknown> => {
      try {
        await promise;
      } catch (error) {
        return error;
      }
      throw new Error('expected a rejection');
    };
    const expectInvalidCursor = async (promise: Promise<unknown>) => {
      const error = await rejection(promise);
      expect(error).toBeInstanceOf(Error);
      expect((error as { code?: unknown }).code).toBe('invalid_cursor');
    };

    it('lists accounts a page at a time in creation order, stable while accounts are added', () =>
      withStore(async ({ store }) => {
        expect(await store.listAccounts()).toEqual({ items: [] });
        const made: string[] = [];
        for (let index = 0; index < 5; index++) {
          made.push((await store.createAccount({ plan: 'free' })).id);
          time += 1;
        }
        // Created in the same millisecond: by id, byte-wise (upper case before lower case).
        await store.createAccount({ plan: 'plus', id: 'acc_same_b' });
        await store.createAccount({ plan: 'plus', id: 'acc_same_a' });
        await store.createAccount({ plan: 'plus', id: 'acc_same_Z' });
        made.push('acc_same_Z', 'acc_same_a', 'acc_same_b');
        await store.setAccountState(made[1] ?? '', 'disabled');
        await store.setPlan(made[2] ?? '', 'max');

        const all = await store.listAccounts();
        expect(all.next).toBeUndefined();
        expect(all.items.map((account) => account.id)).toEqual(made);
        // Accounts as getAccount has them: no balance, no time.
        expect(all.items[0]).toEqual({ id: made[0], plan: 'free', state: 'active' });
        expect(all.items[1]).toEqual({ id: made[1], plan: 'free', state: 'disabled' });
        expect(all.items[2]).toEqual({ id: made[2], plan: 'max', state: 'active' });

        // A full page that is the last has no next.
        expect(await store.listAccounts({ limit: 8 })).toEqual({ items: all.items });
        const short = await store.listAccounts({ limit: 7 });
        expect(short.items).toEqual(all.items.slice(0, 7));
        expect(typeof short.next).toBe('string');

        // Chained pages of 3, with accounts added between pages: none repeats, none is skipped.
        const first = await store.listAccounts({ limit: 3 });
        expect(first.items).toEqual(all.items.slice(0, 3));
        time += 1;
        const late = [(await store.createAccount({ plan: 'pro' })).id, (await store.createAccount({ plan: 'pro' })).id];
        const seen = [...first.items];
        let cursor = first.next;
        let pages = 1;
        while (cursor !== undefined) {
          const page = await store.listAccounts({ limit: 3, cursor });
          expect(page.items.length).toBeLessThanOrEqual(3);
          if (page.next !== undefined) expect(page.items).toHaveLength(3);
          seen.push(...page.items);
          cursor = page.next;
          pages++;
        }
        expect(pages).toBe(4);
        expect(seen.map((account) => account.id)).toEqual([...made, ...late.sort()]);
        // The same cursor again gives the same page.
        expect(await store.listAccounts({ limit: 3, cursor: first.next })).toEqual(await store.listAccounts({ limit: 3, cursor: first.next }));

        await expectInvalidCursor(store.listAccounts({ cursor: 'not a cursor' }));
        await expectInvalidCursor(store.listAccounts({ cursor: 'WyJhIl0' }));
        const entryCursor = await (async () => {
          await store.addCredits(made[0] ?? '', 1);
          await store.addCredits(made[0] ?? '', 1);
          return (await store.entriesPage(made[0] ?? '', { limit: 1 })).next;
        })();
        expect(typeof entryCursor).toBe('string');
        await expectInvalidCursor(store.listAccounts({ cursor: entryCursor }));
        for (const limit of [0, -1, 1.5, 1_001, Number.NaN]) expect(await rejection(store.listAccounts({ limit }))).toBeInstanceOf(RangeError);
        expect((await store.listAccounts({ limit: 1_000 })).items).toHaveLength(10);
        expect((await store.listAccounts({ limit: 1 })).items).toHaveLength(1);
      }));

    it("pages an account's ledger oldest first, chaining cursors while entries are added", () =>
      withStore(async ({ store, funded, invariant }) => {
        const id = await funded(0);
        const other = await funded(0);
        expect(await store.entriesPage(id)).toEqual({ items: [] });
        expect(await store.entriesPage('acc_nobody')).toEqual({ items: [] });
        for (let micros = 1; micros <= 5; micros++) {
          await store.addCredits(id, micros);
          await store.addCredits(other, 100 + micros);
          time += 1;
        }
        const whole = await store.entriesPage(id);
        expect(whole.next).toBeUndefined();
        expect(whole.items).toEqual((await store.entries(id)).reverse());
        expect(whole.items.map((entry) => entry.micros)).toEqual([1, 2, 3, 4, 5]);
        expect(await store.entriesPage(id, { limit: 5 })).toEqual({ items: whole.items });

        const first = await store.entriesPage(id, { limit: 2 });
        expect(first.items).toEqual(whole.items.slice(0, 2));
        if (first.next === undefined) throw new Error('no next page');
        // Entries added after the first page come at the end, once; the other account's never.
        await store.addCredits(id, 6);
        const hold = await store.hold(id, { micros: 10, ttlMs: TTL, keyId: 'key_page', model: 'fast' });
        if (!hold.ok) throw new Error('hold refused');
        await store.settle(hold.value.holdId, { micros: 4, promptTokens: 1, completionTokens: 2 });
        const second = await store.entriesPage(id, { limit: 2, cursor: first.next });
        expect(second.items.map((entry) => entry.micros)).toEqual([3, 4]);
        const third = await store.entriesPage(id, { limit: 2, cursor: second.next });
        expect(third.items.map((entry) => entry.micros)).toEqual([5, 6]);
        const last = await store.entriesPage(id, { limit: 2, cursor: third.next });
        expect(last).toEqual({ items: [(await store.entries(id, { limit: 1 }))[0]] });
        expect(last.items[0]).toMatchObject({ micros: -4, kind: 'charge', keyId: 'key_page', model: 'fast', promptTokens: 1, completionTokens: 2 });

        // Another account's cursor, an accounts cursor, garbage: refused, never a guessed page.
        await expectInvalidCursor(store.entriesPage(other, { cursor: first.next }));
        const accountsCursor = (await store.listAccounts({ limit: 1 })).next;
        await expectInvalidCursor(store.entriesPage(id, { cursor: accountsCursor }));
        await expectInvalidCursor(store.entriesPage(id, { cursor: `${first.next}!` }));
        await expectInvalidCursor(store.entriesPage(id, { cursor: '' }));
        for (const limit of [0, 1_001, 2.5]) expect(await rejection(store.entriesPage(id, { limit }))).toBeInstanceOf(RangeError);
        await invariant(id);
      }));

    it('finds a key by id and renames it, never showing its secret or hash', () =>
      withStore(async ({ store }) => {
        const account = await store.createAccount({ plan: 'plus' });
        const created = await store.createKey(account.id, 'laptop');
        const hash = await hashKey(created.key);
        const info = { id: created.id, name: 'laptop', accountId: account.id, prefix: created.key.slice(0, 11), createdAt: START };
        expect(await store.getKey(created.id)).toEqual(info);
        expect(await store.getKey('key_missing')).toBeUndefined();
        time += 3;
        expect(await store.setKeyName(created.id, 'desktop')).toEqual({ ...info, name: 'desktop' });
        expect(await store.getKey(created.id)).toEqual({ ...info, name: 'desktop' });
        expect((await store.listKeys(account.id)).map((key) => key.name)).toEqual(['desktop']);
        expect((await store.findKey(hash))?.name).toBe('desktop');
        await store.revokeKey(created.id);
        // A revoked key is found by id, and may be renamed.
        expect(await store.getKey(created.id)).toEqual({ ...info, name: 'desktop', revokedAt: START + 3 });
        expect(await store.setKeyName(created.id, 'old laptop')).toEqual({ ...info, name: 'old laptop', revokedAt: START + 3 });
        expect(await store.findKey(hash)).toBeUndefined();
        await expect(store.setKeyName('key_missing', 'x')).rejects.toThrow();
        const shown = JSON.stringify([await store.getKey(created.id), await store.setKeyName(created.id, 'again')]);
        expect(shown).not.toContain(hash);
        expect(shown).not.toContain(created.key.slice(11));
      }));

    it('adds a credit once per idempotency key: replays add nothing, another account or amount conflicts', () =>
      withStore(async ({ store, funded, invariant }) => {
        const id = await funded(0);
        const other = await funded(0);
        const first = await store.creditOnce(id, { micros: 500, idempotencyKey: 'pay_1', meta: { note: 'card' } });
        const entry = {
          id: expect.stringMatching(/^ent_/),
          accountId: id,
          micros: 500,
          kind: 'credit',
          createdAt: START,
          idempotencyKey: 'pay_1',
          meta: { note: 'card' },
        };
        expect(first).toEqual({ ok: true, value: { entry, balance: { balance: 500, held: 0, available: 500 }, replayed: false } });
        if (!first.ok) throw new Error('refused');
        time += 5;
        // A replay (its meta ignored) returns the first entry and the balance now.
        const hold = await store.hold(id, { micros: 100, ttlMs: TTL });
        expect(hold.ok).toBe(true);
        expect(await store.creditOnce(id, { micros: 500, idempotencyKey: 'pay_1', meta: { note: 'retry' } })).toEqual({
          ok: true,
          value: { entry: first.value.entry, balance: { balance: 500, held: 100, available: 400 }, replayed: true },
        });
        const conflict = { ok: false, error: { code: 'idempotency_conflict', message: expect.any(String) } };
        expect(await store.creditOnce(id, { micros: 501, idempotencyKey: 'pay_1' })).toEqual(conflict);
        expect(await store.creditOnce(id, { micros: 499, idempotencyKey: 'pay_1' })).toEqual(conflict);
        // The key is unique across the store, not per account.
        expect(await store.creditOnce(other, { micros: 500, idempotencyKey: 'pay_1' })).toEqual(conflict);
        expect(await store.creditOnce('acc_nobody', { micros: 500, idempotencyKey: 'pay_1' })).toEqual(conflict);
        expect(await invariant(other)).toEqual({ balance: 0, held: 0, available: 0 });
        // Another key adds again, the same amount or not; an unknown account with a new key throws.
        expect(await store.creditOnce(id, { micros: 500, idempotencyKey: 'pay_2' })).toMatchObject({ ok: true, value: { replayed: false } });
        expect(await store.creditOnce(other, { micros: 7, idempotencyKey: 'pay_3' })).toMatchObject({ ok: true, value: { replayed: false } });
        await expect(store.creditOnce('acc_nobody', { micros: 5, idempotencyKey: 'pay_4' })).rejects.toThrow();
        // The key did not stick to the unknown account: it is still free.
        expect(await store.creditOnce(other, { micros: 5, idempotencyKey: 'pay_4' })).toMatchObject({ ok: true, value: { replayed: false } });
        const long = 'k'.repeat(255);
        expect(await store.creditOnce(id, { micros: 1, idempotencyKey: long })).toMatchObject({ ok: true, value: { entry: { idempotencyKey: long } } });
        for (const bad of [
          { micros: 0, idempotencyKey: 'bad_1' },
          { micros: -5, idempotencyKey: 'bad_2' },
          { micros: 1.5, idempotencyKey: 'bad_3' },
          { micros: 2 ** 53, idempotencyKey: 'bad_4' },
          { micros: 5, idempotencyKey: '' },
          { micros: 5, idempotencyKey: 'k'.repeat(256) },
        ]) {
          await expect(store.creditOnce(id, bad)).rejects.toThrow();
        }
        expect(await invariant(id)).toEqual({ balance: 1_001, held: 100, available: 901 });
        expect(await invariant(other)).toEqual({ balance: 12, held: 0, available: 12 });
        const credits = await store.entries(id);
        expect(credits.filter((row) => row.idempotencyKey === 'pay_1')).toEqual([first.value.entry]);
        // A plain addCredits carries no idempotency key.
        await store.addCredits(id, 3);
        expect((await store.entries(id, { limit: 1 }))[0]?.idempotencyKey).toBeUndefined();
      }));

    it('adds a credit once under 20 simultaneous identical calls, and one amount under racing different ones', () =>
      withStore(async ({ store, funded, invariant }) => {
        const id = await funded(0);
        const results = await Promise.all(Array.from({ length: 20 }, () => store.creditOnce(id, { micros: 700, idempotencyKey: 'webhook_1' })));
        const added = results.filter((result) => result.ok && !result.value.replayed);
        expect(added).toHaveLength(1);
        const ids = new Set(results.map((result) => (result.ok ? result.value.entry.id : 'refused')));
        expect([...ids]).toHaveLength(1);
        expect(await invariant(id)).toEqual({ balance: 700, held: 0, available: 700 });
        expect(await store.entries(id)).toHaveLength(1);

        const racing = await Promise.all(
          Array.from({ length: 20 }, (_, index) => store.creditOnce(id, { micros: index % 2 === 0 ? 10 : 20, idempotencyKey: 'webhook_2' })),
        );
        const won = racing.filter((result) => result.ok && !result.value.replayed);
        expect(won).toHaveLength(1);
        const amount = won[0]?.ok ? won[0].value.entry.micros : 0;
        for (const [index, result] of racing.entries()) {
          if ((index % 2 === 0 ? 10 : 20) === amount) expect(result.ok).toBe(true);
          else expect(result).toEqual({ ok: false, error: { code: 'idempotency_conflict', message: expect.any(String) } });
        }
        expect(await invariant(id)).toEqual({ balance: 700 + amount, held: 0, available: 700 + amount });
        expect(await store.entries(id)).toHaveLength(2);
      }));

    it('records the key, model and tokens on a charge, the checkpoint charge included', () =>
      withStore(async ({ store, funded, invariant }) => {
        const checkpoint = checkpointOf(store);
        const id = await funded(10_000);
        const keyed = await store.hold(id, { micros: 500, ttlMs: TTL, requestId: 'req_k', keyId: 'key_x', model: 'fast' });
        const bare = await store.hold(id, { micros: 500, ttlMs: TTL });
        const zero = await store.hold(id, { micros: 500, ttlMs: TTL, keyId: 'key_x', model: 'fast' });
        const crashed = await store.hold(id, { micros: 500, ttlMs: 1_000, requestId: 'req_c', keyId: 'key_y', model: 'image' });
        if (!keyed.ok || !bare.ok || !zero.ok || !crashed.ok) throw new Error('hold refused');
        // Malformed token counts are refused, and the hold stays open.
        for (const promptTokens of [-1, 1.5, Number.NaN]) await expect(store.settle(keyed.value.holdId, { micros: 10, promptTokens })).rejects.toThrow();
        await expect(store.settle(keyed.value.holdId, { micros: 10, completionTokens: -2 })).rejects.toThrow();
        expect(await store.settle(keyed.value.holdId, { micros: 120, promptTokens: 30, completionTokens: 40, meta: { outcome: 'done' } })).toEqual({
          charged: 120,
          already: false,
        });
        expect(await store.settle(keyed.value.holdId, { micros: 5, promptTokens: 1, completionTokens: 1 })).toEqual({ charged: 120, already: true });
        await store.settle(bare.value.holdId, { micros: 60 });
        await store.settle(zero.value.holdId, { micros: 0, promptTokens: 0, completionTokens: 0 });
        await checkpoint([{ holdId: crashed.value.holdId, micros: 80, ttlMs: 1_000 }]);
        time += 1_000;
        expect(await store.releaseExpired()).toBe(1);
        const charges = (await store.entriesPage(id)).items.filter((entry) => entry.kind === 'charge');
        const base = { id: expect.any(String), accountId: id, kind: 'charge', createdAt: START };
        expect(charges).toEqual([
          {
            ...base,
            micros: -120,
            holdId: keyed.value.holdId,
            requestId: 'req_k',
            meta: { outcome: 'done' },
            keyId: 'key_x',
            model: 'fast',
            promptTokens: 30,
            completionTokens: 40,
          },
          { ...base, micros: -60, holdId: bare.value.holdId },
          { ...base, micros: 0, holdId: zero.value.holdId, keyId: 'key_x', model: 'fast', promptTokens: 0, completionTokens: 0 },
          {
            ...base,
            createdAt: START + 1_000,
            micros: -80,
            holdId: crashed.value.holdId,
            requestId: 'req_c',
            meta: { outcome: 'checkpoint' },
            keyId: 'key_y',
            model: 'image',
          },
        ]);
        await invariant(id);
      }));

    it('sums usage from the charges to the micro, by UTC hour or day, key and model, within [from, to)', () =>
      withStore(async ({ store, funded, invariant }) => {
        const checkpoint = checkpointOf(store);
        const HOUR = 3_600_000;
        const DAY = 24 * HOUR;
        const DAY0 = Date.UTC(2023, 10, 15); // a UTC midnight after START
        // Byte-wise, 'key_Z' sorts before 'key_a' (a locale collation would put it after).
        const [A, Z] = ['key_a', 'key_Z'];
        const id = await funded(10_000_000);
        const other = await funded(10_000_000);
        const charge = async (at: number, micros: number, input: { keyId?: string; model?: string; tokens?: [number, number]; account?: string }) => {
          time = at;
          const hold = await store.hold(input.account ?? id, {
            micros: 10_000,
            ttlMs: TTL,
            ...(input.keyId === undefined ? {} : { keyId: input.keyId }),
            ...(input.model === undefined ? {} : { model: input.model }),
          });
          if (!hold.ok) throw new Error('hold refused');
          const tokens = input.tokens === undefined ? {} : { promptTokens: input.tokens[0], completionTokens: input.tokens[1] };
          await store.settle(hold.value.holdId, { micros, ...tokens });
        };
        await charge(DAY0 - 1, 999_999, { keyId: A, model: 'm1', tokens: [9, 9] }); // before `from`
        await charge(DAY0, 100, { keyId: A, model: 'm1', tokens: [10, 20] }); // the first millisecond of the day and hour
        await charge(DAY0 + HOUR - 1, 50, { keyId: A, model: 'm1', tokens: [1, 2] }); // the last of the first hour
        await charge(DAY0 + HOUR, 7, { keyId: A, model: 'm1', tokens: [3, 4] }); // the first of the second
        time = DAY0 + HOUR + 5;
        await store.addCredits(id, 1_000); // credits never count
        await store.creditOnce(id, { micros: 2_000, idempotencyKey: 'usage_credit' });
        await charge(DAY0 + 2 * HOUR, 1_000, { keyId: Z, model: 'm1', tokens: [0, 0] });
        await charge(DAY0 + 2 * HOUR, 33, { keyId: A, model: 'm2' }); // an image: no tokens
        await charge(DAY0 + 2 * HOUR, 444, { keyId: A, model: 'm1', tokens: [5, 5], account: other }); // another account's
        await charge(DAY0 + 3 * HOUR, 11, { model: 'm1', tokens: [1, 1] }); // a signed-in app user: no key
        await charge(DAY0 + 3 * HOUR, 13, { keyId: A }); // a hold that named no model: no model in its rows (sorted first)
        await charge(DAY0 + DAY - 1, 5, { keyId: A, model: 'm1', tokens: [1, 1] }); // the last millisecond of day 0
        await charge(DAY0 + DAY, 9, { keyId: A, model: 'm1', tokens: [2, 2] }); // the first of day 1
        await charge(DAY0 + DAY + 1, 0, { keyId: Z, model: 'm1' }); // a zero charge is a request
        // A stream cut by a crash: charged its checkpoint by the sweep, at the sweep's time.
        time = DAY0 + DAY + 2 * HOUR - 1_000;
        const crashed = await store.hold(id, { micros: 500, ttlMs: 1_000, keyId: Z, model: 'm2' });
        if (!crashed.ok) throw new Error('hold refused');
        await checkpoint([{ holdId: crashed.value.holdId, micros: 40, ttlMs: 1_000 }]);
        time = DAY0 + DAY + 2 * HOUR;
        expect(await store.releaseExpired()).toBe(1);
        await charge(DAY0 + 2 * DAY, 77_777, { keyId: A, model: 'm1', tokens: [7, 7] }); // at `to`: excluded

        const range = { accountId: id, from: DAY0, to: DAY0 + 2 * DAY };
        const row = (period: number, keyId: string | undefined, model: string | undefined, requests: number, tokens: [number, number], micros: number) => ({
          period,
          ...(keyId === undefined ? {} : { keyId }),
          ...(model === undefined ? {} : { model }),
          requests,
          promptTokens: tokens[0],
          completionTokens: tokens[1],
          micros,
        });
        const byDay = [
          row(DAY0, undefined, 'm1', 1, [1, 1], 11),
          row(DAY0, Z, 'm1', 1, [0, 0], 1_000),
          row(DAY0, A, undefined, 1, [0, 0], 13),
          row(DAY0, A, 'm1', 4, [15, 27], 162),
          row(DAY0, A, 'm2', 1, [0, 0], 33),
          row(DAY0 + DAY, Z, 'm1', 1, [0, 0], 0),
          row(DAY0 + DAY, Z, 'm2', 1, [0, 0], 40),
          row(DAY0 + DAY, A, 'm1', 1, [2, 2], 9),
        ];
        expect(await store.usage({ ...range, groupBy: 'day' })).toEqual(byDay);
        expect(await store.usage({ ...range, groupBy: 'hour' })).toEqual([
          row(DAY0, A, 'm1', 2, [11, 22], 150),
          row(DAY0 + HOUR, A, 'm1', 1, [3, 4], 7),
          row(DAY0 + 2 * HOUR, Z, 'm1', 1, [0, 0], 1_000),
          row(DAY0 + 2 * HOUR, A, 'm2', 1, [0, 0], 33),
          row(DAY0 + 3 * HOUR, undefined, 'm1', 1, [1, 1], 11),
          row(DAY0 + 3 * HOUR, A, undefined, 1, [0, 0], 13),
          row(DAY0 + 23 * HOUR, A, 'm1', 1, [1, 1], 5),
          row(DAY0 + DAY, Z, 'm1', 1, [0, 0], 0),
          row(DAY0 + DAY, A, 'm1', 1, [2, 2], 9),
          row(DAY0 + DAY + 2 * HOUR, Z, 'm2', 1, [0, 0], 40),
        ]);
        // The sums are the ledger's charges in the range, to the micro.
        const charged = (await store.entries(id))
          .filter((entry) => entry.kind === 'charge' && entry.createdAt >= range.from && entry.createdAt < range.to)
          .reduce((sum, entry) => sum - entry.micros, 0);
        expect(charged).toBe(1_268);
        expect(byDay.reduce((sum, usage) => sum + usage.micros, 0)).toBe(charged);

        // [from, to): a period cut by the bounds sums only its part inside.
        expect(await store.usage({ accountId: id, from: DAY0 + HOUR, to: DAY0 + DAY, groupBy: 'day' })).toEqual([
          row(DAY0, undefined, 'm1', 1, [1, 1], 11),
          row(DAY0, Z, 'm1', 1, [0, 0], 1_000),
          row(DAY0, A, undefined, 1, [0, 0], 13),
          row(DAY0, A, 'm1', 2, [4, 5], 12),
          row(DAY0, A, 'm2', 1, [0, 0], 33),
        ]);
        expect(await store.usage({ accountId: id, from: DAY0 - 1, to: DAY0, groupBy: 'hour' })).toEqual([row(DAY0 - HOUR, A, 'm1', 1, [9, 9], 999_999)]);
        expect(await store.usage({ accountId: id, from: DAY0 + 2 * DAY, to: DAY0 + 2 * DAY + 1, groupBy: 'day' })).toEqual([
          row(DAY0 + 2 * DAY, A, 'm1', 1, [7, 7], 77_777),
        ]);
        expect(await store.usage({ accountId: id, from: DAY0, to: DAY0, groupBy: 'day' })).toEqual([]);
        // Filters.
        expect(await store.usage({ ...range, groupBy: 'day', keyId: Z })).toEqual(byDay.filter((usage) => usage.keyId === Z));
        expect(await store.usage({ ...range, groupBy: 'day', model: 'm2' })).toEqual(byDay.filter((usage) => usage.model === 'm2'));
        expect(await store.usage({ ...range, groupBy: 'day', keyId: A, model: 'm1' })).toEqual([byDay[3], byDay[7]]);
        expect(await store.usage({ ...range, groupBy: 'day', keyId: 'key_none' })).toEqual([]);
        // Each account its own.
        expect(await store.usage({ ...range, accountId: other, groupBy: 'day' })).toEqual([row(DAY0, A, 'm1', 1, [5, 5], 444)]);
        expect(await store.usage({ ...range, accountId: 'acc_nobody', groupBy: 'day' })).toEqual([]);
        for (const bad of [
          { ...range, from: range.to + 1, groupBy: 'day' as const },
          { ...range, from: 1.5, groupBy: 'day' as const },
          { ...range, from: -1, groupBy: 'day' as const },
          { ...range, groupBy: 'week' as 'day' },
        ]) {
          await expect(store.usage(bad)).rejects.toThrow();
        }
        await invariant(id);
      }));

    runKeyBudgetCases({
      withStore,
      clock: {
        get: () => time,
        set: (ms) => {
          time = ms;
        },
      },
    });
  });
}
