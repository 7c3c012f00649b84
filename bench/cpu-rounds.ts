/** The CPU µs per unit of work: the median of its rounds and every round, sorted. */
export interface CpuRounds {
  median: number;
  rounds: number[];
}

/**
 * Runs `round` (which does `units` units of work) once to warm up, then `count` times, measuring the
 * process's CPU time (user + system) of each: CPU µs per unit, the median and every round (the
 * store-path and chunk-path benches).
 */
export async function cpuRounds(round: () => Promise<void>, units: number, count = 5): Promise<CpuRounds> {
  await round();
  const rounds: number[] = [];
  for (let index = 0; index < count; index++) {
    const start = process.cpuUsage();
    await round();
    const used = process.cpuUsage(start);
    rounds.push((used.user + used.system) / units);
  }
  rounds.sort((a, b) => a - b);
  return { median: rounds[Math.floor(count / 2)] as number, rounds };
}
