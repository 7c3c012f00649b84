// The few autocannon types the benches use (the package ships no types of its own).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    total: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
  }
  interface RequestSpec {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }
  interface Options {
    url: string;
    method?: string;
    connections?: number;
    duration?: number;
    body?: string;
    headers?: Record<string, string>;
    requests?: { setupRequest?: (request: RequestSpec) => RequestSpec }[];
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
