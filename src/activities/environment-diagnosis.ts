import type { SandboxLimits } from '../sandbox';
import type { TestRunReport } from '../shared/types';

const MiB = 1024 * 1024;

/**
 * Which of the sandbox's limits a test run's output shows it ran into, in words a user can act on
 * (`--memory`, `--wall-time`, `.aca.json`), or null. Read from what the processes printed: the
 * kernel and the interpreters say it plainly, and the report cannot say it for a run it never
 * finished.
 */
export function limitHit(report: TestRunReport, limits: SandboxLimits): string | null {
  const text = `${report.message ?? ''}\n${report.output}`;
  if (report.outcome === 'timeout') {
    return `the wall-clock limit of ${Math.round(limits.wallTimeoutMs / 1000)} s was hit (--wall-time, or limits.wallTimeSeconds in .aca.json)`;
  }
  if (
    /\bMemoryError\b|Cannot allocate memory|std::bad_alloc|JavaScript heap out of memory|out of memory/i.test(
      text,
    )
  ) {
    return `the memory limit was hit (${Math.round(limits.memoryBytes / MiB)} MiB; --memory, or limits.memoryMiB in .aca.json)`;
  }
  if (/can't start new thread|Resource temporarily unavailable|fork: retry|EAGAIN/.test(text)) {
    return `a limit on threads, processes or memory was hit (${limits.maxProcesses} processes, ${Math.round(limits.memoryBytes / MiB)} MiB; --memory raises the memory)`;
  }
  if (/CPU time limit exceeded|SIGXCPU/.test(text)) {
    return `the CPU time limit of ${limits.cpuSeconds} s per process was hit (limits.cpuSeconds in .aca.json)`;
  }
  if (/File size limit exceeded|SIGXFSZ/.test(text)) {
    return `the file size limit of ${Math.round(limits.maxFileBytes / MiB)} MiB was hit`;
  }
  return null;
}

/** The last lines of a run's output, for a diagnosis a person reads. */
export function outputTail(output: string, lines = 15, chars = 2000): string {
  return output.trimEnd().split('\n').slice(-lines).join('\n').slice(-chars);
}

/**
 * Why the baseline (the project's tests on the base commit, before any change) says nothing about
 * the code, or null when it ran. A baseline that cannot run would have the agents fix an
 * environment they cannot change, so the run stops before the Planner with this diagnosis: what
 * went wrong, the command, and the end of its output.
 */
export function baselineDiagnosis(
  report: TestRunReport,
  command: string,
  limit: string | null,
): string | null {
  const cannotRun =
    report.environment !== undefined ||
    report.outcome === 'sandbox_error' ||
    report.outcome === 'timeout' ||
    report.outcome === 'limit_exceeded' ||
    (report.outcome === 'collection_error' && limit !== null) ||
    // On the base commit nothing of the run exists yet: the repository's own tests did this.
    report.outcome === 'tampered';
  if (!cannotRun) return null;
  const what =
    report.outcome === 'tampered'
      ? `the repository's own tests do what aca's verdict counts as reaching into the test process, so no verdict on them could be trusted (${report.message ?? 'tampered'}); give the test command yourself (--test-cmd) to have its report taken as written`
      : (report.environment ?? report.message ?? report.outcome);
  const tail = outputTail(report.output);
  return [
    `the tests cannot run on the base commit: ${what}`,
    ...(limit ? [`limit: ${limit}`] : []),
    `command: ${command}`,
    ...(tail ? [`last output:\n${tail}`] : []),
  ].join('\n');
}
