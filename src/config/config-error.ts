/**
 * Configuration problems, each naming the key and where it came from (all of them at once, so
 * that one run of `hookd check-config` shows every mistake). hookd exits 2 on it.
 */
export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problem: string | string[]) {
    const problems = typeof problem === 'string' ? [problem] : problem;
    super(
      problems.length === 1
        ? problems[0]!
        : `${problems.length} problems:\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}
