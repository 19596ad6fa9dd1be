import { RunStopped, type RunContext } from './run-context';

/**
 * The INIT phase: the run's branch and work tree, its setup command, the baseline (the tests on
 * the base commit, for `--repo` runs) and then the user's acceptance tests, committed on the
 * branch. Each is a step of its own.
 */
export async function prepareRunPhase(run: RunContext): Promise<void> {
  await prepareRunRepository(run);
  const { input, record, work } = run;
  const link = input.link ?? null;
  if (work.setupCommand) await runSetupCommand(run, work.setupCommand);
  if (link?.baseline) {
    // Same base commit as the run it came from: the same baseline.
    record.baseline = link.baseline.summary;
    work.baselineRef = link.baseline.ref;
  } else if (input.repo) {
    await runBaseline(run);
  }
  await prepareWorkspace(run);
}

/** The run's branch and work tree: the worker that takes the step becomes the run's host. */
async function prepareRunRepository(run: RunContext): Promise<void> {
  const { input, record, work } = run;
  const link = input.link ?? null;
  const prepared = await run.activities.repository.prepareRun.executeWithOptions(
    { summary: input.repo ? `git · worktree of ${input.repo.path}` : 'git · repository of the run' },
    [
      {
        workflowId: run.workflowId,
        ...(input.workspace ? { workspace: input.workspace } : {}),
        language: input.language,
        repo: input.repo,
        testCommand: input.testCommand,
        setupCommand: input.setupCommand,
        ...(input.limits ? { limits: input.limits } : {}),
        ...(input.testEnv ? { testEnv: input.testEnv } : {}),
        start: link
          ? {
              commit: link.startCommit,
              baseCommit: link.baseCommit,
              parentPlace: link.parentPlace,
              parentRun: link.parentRun,
            }
          : null,
      },
    ],
  );
  record.place = prepared.place;
  record.branch = prepared.place.branch;
  record.baseCommit = prepared.baseCommit;
  record.headCommit = prepared.startCommit;
  record.testCommand = prepared.testSetup.command.label;
  record.workspace = prepared.place.workTree;
  work.testSetup = prepared.testSetup;
  work.host = prepared.queues;
  work.preparedOn = prepared.queues.disk;
  work.movable = prepared.movable;
  if (prepared.hostStartTimeoutMs) work.hostStartTimeoutMs = prepared.hostStartTimeoutMs;
  if (prepared.heartbeatTimeoutMs) work.heartbeatTimeoutMs = prepared.heartbeatTimeoutMs;
  work.setupCommand = prepared.setupCommand;
  work.runCommand = prepared.runCommand;
  run.publish();
}

async function runSetupCommand(run: RunContext, command: string): Promise<void> {
  const { input, work } = run;
  await run.whenNotPaused();
  const setup = await run.onHost(
    (host) =>
      host.testing.runSetup.executeWithOptions({ summary: `setup · ${command.slice(0, 80)}` }, [
        {
          language: input.language,
          command,
          setup: work.testSetup!,
          network: input.setupNetwork,
          ...run.hostStep()!,
          commitMessage: 'aca: setup command output',
          execution: run.execution,
        },
      ]),
    'tests',
  );
  if (!setup.ok) {
    throw new RunStopped(
      'error',
      `the setup command "${command}" failed (${setup.outcome}${setup.message ? `: ${setup.message}` : ''}); last output:\n${setup.outputTail}`,
    );
  }
  run.recordCommit(setup.commit);
  work.setUp = true;
}

/** The tests on the base commit of a `--repo` run: what already fails there is not the run's. */
async function runBaseline(run: RunContext): Promise<void> {
  const { input, record, work } = run;
  const setup = work.testSetup!;
  await run.whenNotPaused();
  const baseline = await run.onHost(
    (host) =>
      host.testing.runTests.executeWithOptions({ summary: `tester · baseline: ${setup.command.label}` }, [
        {
          runKey: run.runKey,
          attempt: 0,
          language: input.language,
          setup,
          ...run.hostStep()!,
          baseCommit: record.baseCommit,
          ...run.targetsToJudge(),
        },
      ]),
    'tests',
  );
  if (baseline.cannotRun) {
    // Agents cannot change the machine the tests run on: nothing to plan, nothing to learn.
    throw new RunStopped('environment', baseline.cannotRun);
  }
  record.baseline = { passed: baseline.passed, failed: baseline.failed + baseline.errors };
  work.baselineRef = baseline.reportRef;
  record.failingTests = baseline.failingTests ?? [];
  if (baseline.targets) record.targets = baseline.targets;
  run.publish();
  const unknown = baseline.outcome === 'completed' ? (baseline.unknownTargets ?? []) : [];
  if (unknown.length > 0) {
    // Bad input found before any model call: a target no test of the base commit belongs to.
    record.unknownTargets = unknown;
    throw new RunStopped(
      'error',
      `no such test: ${unknown.join(', ')} (a target must name a test or test file that exists at the base commit; ${baseline.passed + baseline.failed + baseline.errors} tests ran there)`,
    );
  }
}

/** The user's acceptance tests, copied into the work tree read-only and committed there. */
async function prepareWorkspace(run: RunContext): Promise<void> {
  const { input, record, work } = run;
  const acceptance = await run.onHost((host) =>
    host.files.prepareWorkspace.executeWithOptions({ summary: 'prepare workspace' }, [
      {
        testsDir: input.testsDir,
        commitMessage: 'aca: acceptance tests given with --tests',
        execution: run.execution,
        ...run.hostStep()!,
      },
    ]),
  );
  work.protectedPaths = acceptance.protectedPaths;
  run.recordCommit(acceptance.commit);
  if (work.protectedPaths.length > 0) work.acceptanceCommit = record.headCommit;
}
