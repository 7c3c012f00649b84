import { createMemoryStore } from './memory-store';
import { runStoreCases } from '@tollgate/testing/store-contract';

runStoreCases('memory', async ({ now }) => {
  const { store, state } = createMemoryStore({ now });
  return {
    store,
    dump: async () =>
      JSON.stringify({
        accounts: [...state.accounts.values()],
        keys: [...state.keys.values()],
        holds: [...state.holds.values()],
        entries: [...state.entries.values()],
      }),
  };
});
