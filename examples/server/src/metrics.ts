import type { RequestLog } from '@tollgate/gateway';

/** Prometheus counters fed by the gateway's request log. */
export interface Metrics {
  record(log: RequestLog): void;
  /** The Prometheus text exposition. */
  render(active: number): string;
}

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * Counters of requests by path, status and code, latency buckets, micro-dollars charged, tokens
 * billed, and usage an upstream reported beyond the limits it was sent (`usageOverLimit` of the
 * request log: a model that ignores its output limit; it is billed at the limit).
 */
export function createMetrics(): Metrics {
  const requests = new Map<string, number>();
  const buckets = new Array<number>(BUCKETS.length).fill(0);
  let count = 0;
  let sum = 0;
  let micros = 0;
  let promptTokens = 0;
  let completionTokens = 0;
  const overLimit = { requests: 0, prompt: 0, completion: 0 };
  return {
    record(log) {
      // A plain 404 (no code) is a path the gateway does not serve: one series for all of them, so
      // clients requesting random paths cannot grow the metrics without bound.
      const path = log.status === 404 && !log.code ? 'other' : (log.path ?? '');
      const key = `path="${label(path)}",status="${log.status}",code="${label(log.code ?? '')}"`;
      requests.set(key, (requests.get(key) ?? 0) + 1);
      const seconds = log.latencyMs / 1000;
      count++;
      sum += seconds;
      BUCKETS.forEach((bound, index) => {
        if (seconds <= bound) buckets[index] = (buckets[index] ?? 0) + 1;
      });
      if (log.funding !== 'included') micros += log.costMicros ?? 0;
      promptTokens += log.promptTokens ?? 0;
      completionTokens += log.completionTokens ?? 0;
      if (log.usageOverLimit) {
        overLimit.requests++;
        overLimit.prompt += log.usageOverLimit.promptTokens;
        overLimit.completion += log.usageOverLimit.completionTokens;
      }
    },
    render(active) {
      const lines = [
        '# HELP tollgate_requests_total Requests answered, by path, status and error code.',
        '# TYPE tollgate_requests_total counter',
        ...[...requests].map(([labels, value]) => `tollgate_requests_total{${labels}} ${value}`),
        '# HELP tollgate_request_duration_seconds Time to the end of the reply (streams: to their end).',
        '# TYPE tollgate_request_duration_seconds histogram',
        ...BUCKETS.map((bound, index) => `tollgate_request_duration_seconds_bucket{le="${bound}"} ${buckets[index]}`),
        `tollgate_request_duration_seconds_bucket{le="+Inf"} ${count}`,
        `tollgate_request_duration_seconds_sum ${sum}`,
        `tollgate_request_duration_seconds_count ${count}`,
        '# HELP tollgate_charged_micros_total Micro-dollars charged.',
        '# TYPE tollgate_charged_micros_total counter',
        `tollgate_charged_micros_total ${micros}`,
        '# HELP tollgate_tokens_total Tokens billed.',
        '# TYPE tollgate_tokens_total counter',
        `tollgate_tokens_total{kind="prompt"} ${promptTokens}`,
        `tollgate_tokens_total{kind="completion"} ${completionTokens}`,
        '# HELP tollgate_usage_over_limit_total Requests whose upstream reported usage beyond the limits sent to it (billed at the limits).',
        '# TYPE tollgate_usage_over_limit_total counter',
        `tollgate_usage_over_limit_total ${overLimit.requests}`,
        '# HELP tollgate_usage_over_limit_tokens_total Tokens reported beyond the limits sent upstream: not billed.',
        '# TYPE tollgate_usage_over_limit_tokens_total counter',
        `tollgate_usage_over_limit_tokens_total{kind="prompt"} ${overLimit.prompt}`,
        `tollgate_usage_over_limit_tokens_total{kind="completion"} ${overLimit.completion}`,
        '# HELP tollgate_active_requests Requests and streams not finished.',
        '# TYPE tollgate_active_requests gauge',
        `tollgate_active_requests ${active}`,
      ];
      return `${lines.join('\n')}\n`;
    },
  };
}

/** A Prometheus label value: backslash, double quote and newline escaped. */
function label(value: string): string {
  return value.replace(/[\\"\n]/g, (char) => (char === '\n' ? '\\n' : `\\${char}`));
}
