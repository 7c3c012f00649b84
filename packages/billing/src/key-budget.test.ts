import { describe, expect, it } from 'vitest';
import { addKeySpend, assertKeyBudget, budgetPeriodStart, keyBudgetRemaining, keyBudgetStatus, spentInPeriod } from './key-budget';

describe('key budget periods', () => {
  it('start on the UTC day and month boundaries, and at 0 for total', () => {
    const at = Date.UTC(2024, 1, 29, 23, 59, 59, 999); // a leap day, its last millisecond
    expect(budgetPeriodStart('day', at)).toBe(Date.UTC(2024, 1, 29));
    expect(budgetPeriodStart('day', at + 1)).toBe(Date.UTC(2024, 2, 1));
    expect(budgetPeriodStart('month', at)).toBe(Date.UTC(2024, 1, 1));
    expect(budgetPeriodStart('month', at + 1)).toBe(Date.UTC(2024, 2, 1));
    expect(budgetPeriodStart('month', Date.UTC(2024, 11, 31, 12))).toBe(Date.UTC(2024, 11, 1));
    expect(budgetPeriodStart('month', Date.UTC(2025, 0, 1))).toBe(Date.UTC(2025, 0, 1));
    expect(budgetPeriodStart('total', at)).toBe(0);
  });

  it('count a charge in its period, start again on a later one, and leave the counter for an earlier one', () => {
    const day = Date.UTC(2024, 0, 10);
    const counter = { spent: 300, since: day };
    expect(addKeySpend('day', counter, 50, day + 5)).toEqual({ spent: 350, since: day });
    expect(addKeySpend('day', counter, 50, day + 86_400_000)).toEqual({ spent: 50, since: day + 86_400_000 });
    expect(addKeySpend('day', counter, 50, day - 1)).toBe(counter);
    expect(spentInPeriod('day', counter, day + 86_399_999)).toBe(300);
    expect(spentInPeriod('day', counter, day + 86_400_000)).toBe(0);
    // A clock behind the counter's period: what was counted still counts.
    expect(spentInPeriod('day', counter, day - 1)).toBe(300);
    expect(keyBudgetRemaining({ micros: 1_000, period: 'day' }, counter, 200, day)).toBe(500);
    expect(keyBudgetRemaining({ micros: 1_000, period: 'day' }, counter, 200, day + 86_400_000)).toBe(800);
    expect(keyBudgetStatus({ micros: 1_000, period: 'month' }, { spent: 7, since: Date.UTC(2024, 0, 1) }, day)).toEqual({
      micros: 1_000,
      period: 'month',
      spent: 7,
      periodStart: Date.UTC(2024, 0, 1),
    });
  });

  it('refuses a malformed budget', () => {
    expect(() => assertKeyBudget(null)).not.toThrow();
    expect(() => assertKeyBudget({ micros: 0, period: 'total' })).not.toThrow();
    expect(() => assertKeyBudget({ micros: -1, period: 'day' })).toThrow(
      new RangeError('key budget micros must be a non-negative safe integer of micro-dollars'),
    );
    expect(() => assertKeyBudget({ micros: 2 ** 53, period: 'day' })).toThrow(RangeError);
    expect(() => assertKeyBudget({ micros: 1, period: 'week' as 'day' })).toThrow(new RangeError('key budget period must be one of total, day, month'));
    expect(() => assertKeyBudget('1000' as never)).toThrow(new TypeError('key budget must be an object or null'));
  });
});
