/**
 * The Store contract suite: every store (memory, SQLite, PostgreSQL) runs it with
 * `runStoreCases(label, make)`. `make` gets the injected clock; it may also return `dump()`, the
 * store's raw data as text, so the suite can check that no key secret is stored.
 */
import { describe, expect, it } from 'vitest';
import { hashKey, isServiceKey, type Store } from '@tollgate/billing';

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
        expect(await store.hold(id, { micros: 401, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 400 } });
        // Partial: holds all of what is available when that is at least the minimum.
        const partial = await store.hold(id, { micros: 900, minimum: 300, ttlMs: TTL });
        expect(partial).toEqual({ ok: true, value: { holdId: expect.any(String), micros: 400 } });
        expect(await invariant(id)).toEqual({ balance: 1_000, held: 1_000, available: 0 });
        expect(await store.hold(id, { micros: 5, minimum: 1, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 0 } });
        // Nothing available and a positive amount wanted: refused even with minimum 0.
        expect(await store.hold(id, { micros: 5, minimum: 0, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 0 } });
        // A free request (0 micros) holds nothing and passes while the balance is not negative.
        expect(await store.hold(id, { micros: 0, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 0 } });
        await store.release(first.ok ? first.value.holdId : '');
        expect(await store.hold(id, { micros: 601, minimum: 601, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 600 } });
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
        expect(await store.hold(id, { micros: 0, minimum: 0, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: -120 } });
        expect(await store.hold(id, { micros: 10, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: -120 } });
        expect(await store.addCredits(id, 120)).toEqual({ balance: 0, held: 0, available: 0 });
        expect(await store.hold(id, { micros: 0, ttlMs: TTL })).toMatchObject({ ok: true, value: { micros: 0 } });
        expect(await store.hold(id, { micros: 1, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 0 } });
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
        expect(await store.hold(b, { micros: 60, ttlMs: TTL })).toEqual({ ok: false, error: { code: 'insufficient_balance', available: 50 } });
        expect(await invariant(a)).toEqual({ balance: 100, held: 100, available: 0 });
        expect(await invariant(b)).toEqual({ balance: 50, held: 0, available: 50 });
        expect(await store.entries(b)).toHaveLength(1);
        expect(await store.entries('acc_nobody')).toEqual([]);
      }));
  });
}
