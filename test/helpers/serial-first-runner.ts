/**
 * Jest's own runner, run twice: first the suites that must have the machine to themselves, one
 * at a time in one worker, then every other suite on `maxWorkers` workers side by side. The
 * suites that need the machine (listed in jest.config.js's runnerOptions.serial, each with its
 * reason) probe every process of the sandbox's uid range, or listen on fixed ports, so they would
 * see, or be seen by, the runs of suites beside them.
 *
 * With --runInBand (or a single test file) everything runs in band, as Jest would.
 */
import * as path from 'node:path';
import TestRunner, {
  EmittingTestRunner,
  type Config,
  type Test,
  type TestEvents,
  type TestRunnerContext,
  type TestRunnerOptions,
  type TestWatcher,
  type UnsubscribeFn,
} from 'jest-runner';

export interface SerialFirstOptions {
  /** Test files relative to the root directory, run alone before the others. */
  serial?: string[];
}

export default class SerialFirstRunner extends EmittingTestRunner {
  private readonly serialFiles: Set<string>;
  private readonly alone: TestRunner;
  private readonly sideBySide: TestRunner;

  constructor(
    globalConfig: Config.GlobalConfig,
    context: TestRunnerContext,
    options?: Record<string, unknown>,
  ) {
    super(globalConfig, context, options);
    const serial = (options as SerialFirstOptions | undefined)?.serial ?? [];
    this.serialFiles = new Set(serial.map((file) => path.resolve(globalConfig.rootDir, file)));
    this.alone = new TestRunner({ ...globalConfig, maxWorkers: 1 }, context);
    this.sideBySide = new TestRunner(globalConfig, context);
  }

  async runTests(tests: Test[], watcher: TestWatcher, options: TestRunnerOptions): Promise<void> {
    if (options.serial) return this.sideBySide.runTests(tests, watcher, options);
    const first = tests.filter((test) => this.serialFiles.has(test.path));
    const rest = tests.filter((test) => !this.serialFiles.has(test.path));
    // In a worker process of its own rather than in band: Jest's main process stays free of what
    // the suites load (the Temporal SDK's native runtime among it).
    if (first.length > 0) await this.alone.runTests(first, watcher, { serial: false });
    if (rest.length > 0 && !watcher.isInterrupted()) await this.sideBySide.runTests(rest, watcher, options);
  }

  on<Name extends keyof TestEvents>(
    eventName: Name,
    listener: (eventData: TestEvents[Name]) => void | Promise<void>,
  ): UnsubscribeFn {
    const unsubscribes = [this.alone.on(eventName, listener), this.sideBySide.on(eventName, listener)];
    return () => unsubscribes.forEach((unsubscribe) => unsubscribe());
  }
}
