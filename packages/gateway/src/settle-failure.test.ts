import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from './test-harness';

describe('a settlement that cannot be written', () => {
  it('is retried, then reported with the request, account and amount', async () => {
    const store = memoryStore();
    let attempts = 0;
    const failing = Object.assign(Object.create(store) as typeof store, {
      settle: async () => {
        attempts++;
        throw new Error('database is gone');
      },
    });
    const reports: { requestId: string; accountId: string; micros: number }[] = [];
    const t = await setup({ store: failing, onSettleError: (details) => void reports.push(details) });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(200);
    expect(attempts).toBe(4);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatchObject({ requestId: response.headers.get('x-request-id'), accountId: t.accountId });
    expect(reports[0]!.micros).toBeGreaterThan(0);
  });
});
