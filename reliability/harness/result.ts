/** What a scenario returns: its figures for the table and the checks of its invariant. */

/** One checked property of a scenario. */
export interface Check {
  /** What must hold, as a sentence. */
  name: string;
  /** Whether it held in this run. */
  ok: boolean;
  /** The observed figures behind the verdict. */
  detail: string;
  /** When set: the fix this check waits for (and who owns it); CI skips it until the fix lands. */
  waitsFor?: string;
  /** Reported by `npm run reliability`, never a CI assertion: a latency comparison or a figure a small sample or a loaded machine would flake. */
  reportedOnly?: true;
}

/** A scenario's outcome. */
export interface ScenarioResult {
  scenario: string;
  /** Figures for the table: counts, milliseconds, bytes. */
  figures: Record<string, number | string>;
  checks: Check[];
}

/** `short`: the CI form (seconds); `full`: the figures of docs/reliability.md. */
export type Size = 'short' | 'full';

/** A check from a condition and its detail. */
export function check(name: string, ok: boolean, detail: string, waitsFor?: string): Check {
  return waitsFor === undefined ? { name, ok, detail } : { name, ok, detail, waitsFor };
}

/** A check that is only reported (see {@link Check.reportedOnly}). */
export function reportedCheck(name: string, ok: boolean, detail: string): Check {
  return { name, ok, detail, reportedOnly: true };
}

/**
 * The library fixes some checks wait for (issue #20), each named for what it waits on. A check
 * carrying one is reported by `npm run reliability` and skipped in CI until the fix lands; then it
 * becomes a plain check.
 */
export const WAITS_FOR = {
  checkpoints: "durable crash checkpoints of delivered cost (a crashed stream's expired hold charges its checkpointed amount)",
  chargeCap: 'the charge capped at the hold (usage above the limits billed at the limits, the excess logged and counted in /metrics)',
  clientStall: 'a stream whose client stopped reading cut after a documented stall limit (clientStallTimeoutMs)',
} as const;
