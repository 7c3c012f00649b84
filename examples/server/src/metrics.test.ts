import { describe, expect, it } from 'vitest';
import { createMetrics } from './metrics';

describe('createMetrics', () => {
  it('counts requests whose upstream reported usage beyond the limits, and the unbilled tokens', () => {
    const metrics = createMetrics();
    const base = { method: 'POST', path: '/v1/chat/completions', status: 200, latencyMs: 12 };
    metrics.record({ ...base, costMicros: 531, promptTokens: 19, completionTokens: 256, usageOverLimit: { promptTokens: 49_981, completionTokens: 4_744 } });
    metrics.record({ ...base, costMicros: 40, promptTokens: 10, completionTokens: 15 });
    metrics.record({ ...base, costMicros: 531, promptTokens: 19, completionTokens: 256, usageOverLimit: { promptTokens: 0, completionTokens: 10 } });
    const text = metrics.render(0);
    expect(text).toContain('# TYPE tollgate_usage_over_limit_total counter\ntollgate_usage_over_limit_total 2\n');
    expect(text).toContain('tollgate_usage_over_limit_tokens_total{kind="prompt"} 49981\n');
    expect(text).toContain('tollgate_usage_over_limit_tokens_total{kind="completion"} 4754\n');
    expect(text).toContain('tollgate_charged_micros_total 1102\n');
  });

  it('shows the over-limit counters at 0 before any request', () => {
    const text = createMetrics().render(0);
    expect(text).toContain('tollgate_usage_over_limit_total 0\n');
    expect(text).toContain('tollgate_usage_over_limit_tokens_total{kind="completion"} 0\n');
  });
});
