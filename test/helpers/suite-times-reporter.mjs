/**
 * A Jest reporter, registered beside the default one in jest.config.js: writes every suite's
 * duration to a JSON file (test-output/suite-times.json unless its `outputFile` option says
 * otherwise) and prints the slowest suites as a table when the run ends, so that the suites worth
 * speeding up, or moving to `npm run test:slow`, are named by each CI run.
 *
 * Plain JavaScript (an ES module) because Jest loads reporters untransformed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export default class SuiteTimesReporter {
  /**
   * @param {import('@jest/reporters').Config.GlobalConfig} globalConfig
   * @param {{ outputFile?: string, top?: number }} [options]
   */
  constructor(globalConfig, options = {}) {
    this.rootDir = globalConfig.rootDir;
    this.maxWorkers = globalConfig.maxWorkers;
    this.outputFile = path.resolve(
      this.rootDir,
      process.env.ACA_SUITE_TIMES_FILE || options.outputFile || 'test-output/suite-times.json',
    );
    this.top = options.top ?? 15;
    // Each suite's CPU time, written there by the test environment (helpers/node-environment.ts)
    // of the worker processes, which Jest starts after making its reporters and which inherit this.
    this.cpuDir = path.join(path.dirname(this.outputFile), 'suite-cpu');
    process.env.ACA_SUITE_CPU_DIR = this.cpuDir;
    /** @type {Array<{ file: string, ms: number, tests: number, failed: number, failedToRun: boolean }>} */
    this.suites = [];
    this.startedAt = Date.now();
  }

  onRunStart() {
    this.startedAt = Date.now();
    this.suites = [];
    fs.rmSync(this.cpuDir, { recursive: true, force: true });
    fs.mkdirSync(this.cpuDir, { recursive: true });
  }

  /**
   * @param {unknown} _test
   * @param {import('@jest/test-result').TestResult} result
   */
  onTestResult(_test, result) {
    const { start, end } = result.perfStats;
    this.suites.push({
      file: path.relative(this.rootDir, result.testFilePath),
      ms: start && end ? end - start : 0,
      tests: result.numPassingTests + result.numFailingTests + result.numPendingTests + result.numTodoTests,
      failed: result.numFailingTests,
      failedToRun: Boolean(result.testExecError),
    });
  }

  onRunComplete() {
    const wallMs = Date.now() - this.startedAt;
    const cpu = readSuiteCpu(this.cpuDir);
    const suites = [...this.suites]
      .map((s) => ({ ...s, ...(cpu.get(s.file) ?? {}) }))
      .sort((a, b) => b.ms - a.ms);
    const report = {
      finishedAt: new Date().toISOString(),
      wallMs,
      maxWorkers: this.maxWorkers,
      suiteMsTotal: suites.reduce((sum, s) => sum + s.ms, 0),
      suiteCpuMsTotal: suites.reduce((sum, s) => sum + (s.cpuMs ?? 0), 0),
      suites,
    };
    fs.mkdirSync(path.dirname(this.outputFile), { recursive: true });
    fs.writeFileSync(this.outputFile, JSON.stringify(report, null, 2) + '\n');
    process.stderr.write(formatTable(report, this.top, path.relative(process.cwd(), this.outputFile)));
  }

  getLastError() {
    return undefined;
  }
}

/**
 * CPU time per suite file: its test process's own and that of the processes it started.
 * @param {string} dir
 * @returns {Map<string, { cpuMs: number, childrenCpuMs: number }>}
 */
function readSuiteCpu(dir) {
  const cpu = new Map();
  let names = [];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return cpu;
  }
  for (const name of names) {
    try {
      const { file, ownMs, childrenMs } = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
      cpu.set(file, { cpuMs: Math.round(ownMs + childrenMs), childrenCpuMs: Math.round(childrenMs) });
    } catch {
      // A suite whose process died before writing, or a stray file: no figure for it.
    }
  }
  return cpu;
}

/**
 * @param {{ wallMs: number, maxWorkers: number, suiteMsTotal: number, suiteCpuMsTotal?: number, suites: Array<{ file: string, ms: number, cpuMs?: number, tests: number, failed: number }> }} report
 * @param {number} top
 * @param {string} where
 */
export function formatTable(report, top, where) {
  const shown = report.suites.slice(0, top);
  const seconds = (ms) => (ms / 1000).toFixed(1);
  const lines = [
    '',
    `Slowest ${shown.length} of ${report.suites.length} suites (wall ${seconds(report.wallMs)} s, ` +
      `suites' own time ${seconds(report.suiteMsTotal)} s, their CPU ${seconds(report.suiteCpuMsTotal ?? 0)} s, ` +
      `maxWorkers ${report.maxWorkers}; all in ${where}):`,
    `  ${'s'.padStart(7)}  ${'cpu s'.padStart(7)}  ${'tests'.padStart(5)}  file`,
    ...shown.map(
      (s) =>
        `  ${seconds(s.ms).padStart(7)}  ${(s.cpuMs === undefined ? '-' : seconds(s.cpuMs)).padStart(7)}  ${String(s.tests).padStart(5)}  ${s.file}` +
        (s.failed > 0 ? `  (${s.failed} failed)` : ''),
    ),
    '',
  ];
  return lines.join('\n') + '\n';
}
