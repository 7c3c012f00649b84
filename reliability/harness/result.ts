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
