import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  log,
  metricMeter,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { RememberAttemptInput } from '../activities/memory-activities';
import type { RunInput, RunResult, RunSnapshot } from '../shared/run-types';
import { safeKey } from '../shared/safe-key';
import {
  AgentIterationKey,
  AgentLanguageKey,
  AgentPassRateKey,
  AgentStateKey,
} from '../shared/search-attributes';
import type { AgentRole, AgentState, Analysis, FailureReason, Plan } from '../shared/types';
import { feedbackUpdate, MAX_FEEDBACK_CHARS, pauseSignal, resumeSignal, stateQuery } from './signals';
import { renderDetails } from './details';

/** Ends the run early with a reason; caught at the top of the workflow. */
class RunStopped extends Error {
  constructor(
    readonly reason: FailureReason,
    message: string,
  ) {
    super(message);
  }
}

const MAX_IDLE_STEPS = 3;

// Emitted through the worker runtime's Prometheus endpoint; the SDK skips them on replay.
const runsFinished = metricMeter.createCounter(
  'aca_runs_finished',
  'runs',
  'Agent runs by end state and reason',
);
const iterationsStarted = metricMeter.createCounter(
  'aca_iterations',
  'iterations',
  'Coding attempts started',
);

/** What a run hands to its next execution when history grows long enough for continue-as-new. */
export interface CarriedState {
  snapshot: RunSnapshot;
  stateBeforePause: AgentState;
  pendingFeedback: string[];
  protectedPaths: string[];
  plan: Plan | null;
  testsNeeded: boolean;
  testPass: number;
  /** The iteration the next execution starts with. */
  nextIteration: number;
}

export async function codingAgentWorkflow(input: RunInput, carried?: CarriedState): Promise<RunResult> {
  const { options } = input;
  const info = workflowInfo();
  // The first execution's run id stays the same across continue-as-new, so refs do too.
  const runKey = `${safeKey(info.workflowId)}/${safeKey(info.firstExecutionRunId)}`;

  const snapshot: RunSnapshot = carried?.snapshot ?? {
    workflowId: info.workflowId,
    state: 'INIT',
    reason: null,
    iterations: 0,
    maxIterations: options.maxIterations,
    passRate: null,
    tests: { passed: 0, failed: 0, errors: 0 },
    workspace: input.workspace,
    files: [],
    tokens: { prompt: 0, completion: 0 },
    transitions: [],
    paused: false,
    warning: null,
    lastAnalysis: null,
    error: null,
  };
  /** The state a paused run returns to. */
  let stateBeforePause: AgentState = carried?.stateBeforePause ?? 'INIT';
  const pendingFeedback: string[] = carried?.pendingFeedback ?? [];
  let finished = false;

  // ---- activities -------------------------------------------------------------
  const defaultRetry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;
  const agents = proxyActivities<Activities>({
    startToCloseTimeout: options.modelTimeoutMs + 10_000,
    heartbeatTimeout: '20s',
    retry: { ...defaultRetry, maximumAttempts: 8, nonRetryableErrorTypes: ['ModelRequestRejected'] },
  });
  const quick = proxyActivities<Activities>({
    startToCloseTimeout: '1m',
    retry: { ...defaultRetry, maximumAttempts: 5, nonRetryableErrorTypes: ['BadRunInput'] },
  });
  // Workspace and conversation-store steps take milliseconds on the worker that runs the workflow.
  // As local activities they are still retried and recorded, but skip the round trip through the
  // server's task queue (~45 ms each on a dev server), which was most of a run's overhead. Runs
  // begun before this change replay with the regular activities they recorded.
  const local = patched('local-workspace-activities')
    ? proxyLocalActivities<Activities>({
        startToCloseTimeout: '1m',
        retry: { ...defaultRetry, maximumAttempts: 5, nonRetryableErrorTypes: ['BadRunInput'] },
      })
    : quick;
  // A turn's first model step opens its conversation itself (runs begun before: a separate step).
  const openTurnInFirstStep = patched('open-turn-in-first-step');
  // The last attempt is stored with the outcome, and the workspace listed while memory is saved.
  const endInOneStep = patched('end-in-one-step');
  // The Planner's first model step looks up the lessons itself (runs begun before: an activity of
  // its own, one more round trip through the server before planning starts). Asked here, with the
  // others, before the first await: the answer must not depend on where a local activity's
  // result falls in the history.
  const recallInPlannerStep = openTurnInFirstStep && patched('recall-in-planner-step');
  // Lessons help but are not needed: after a short wait for the database the run plans without.
  const recall = proxyActivities<Activities>({
    startToCloseTimeout: '20s',
    scheduleToCloseTimeout: '45s',
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '10s',
      nonRetryableErrorTypes: ['MemoryQueryError'],
    },
  });
  // Memory writes must not be lost to an outage, and must not hold up the agents either: they
  // run in the background, in order, retrying for up to an hour; the run waits for them only
  // before it ends or continues as new.
  const memoryWrites = proxyActivities<Activities>({
    startToCloseTimeout: '30s',
    heartbeatTimeout: '8s',
    scheduleToCloseTimeout: '1h',
    retry: {
      initialInterval: '1s',
      backoffCoefficient: 2,
      maximumInterval: '30s',
      nonRetryableErrorTypes: ['MemoryQueryError'],
    },
  });
  const testing = proxyActivities<Activities>({
    startToCloseTimeout: '15m',
    heartbeatTimeout: '30s',
    retry: { ...defaultRetry, maximumAttempts: 3, nonRetryableErrorTypes: ['SandboxUnavailable'] },
  });

  let memoryChain: Promise<void> = Promise.resolve();
  let memoryLost = 0;
  /** Queues a memory write behind the earlier ones, immune to the run's cancellation. */
  const remember = (what: string, write: () => Promise<unknown>): void => {
    memoryChain = memoryChain.then(() =>
      CancellationScope.nonCancellable(write).then(
        () => undefined,
        (err: unknown) => {
          memoryLost += 1;
          log.error('failure memory write given up', {
            what,
            error: err instanceof Error ? describeFailure(err) : String(err),
          });
        },
      ),
    );
  };

  // ---- visibility ---------------------------------------------------------------
  const publish = (): void => {
    upsertSearchAttributes([
      { key: AgentStateKey, value: snapshot.state },
      { key: AgentIterationKey, value: snapshot.iterations },
      { key: AgentPassRateKey, value: snapshot.passRate ?? 0 },
      { key: AgentLanguageKey, value: input.language },
    ]);
    setCurrentDetails(renderDetails(snapshot));
  };

  const transition = (to: AgentState): void => {
    if (snapshot.paused && to !== 'PAUSED') {
      // The run moves on in the background of a pause; show it when resumed.
      stateBeforePause = to;
      return;
    }
    snapshot.transitions.push({ from: snapshot.state, to, at: new Date(Date.now()).toISOString() });
    snapshot.state = to;
    publish();
  };

  // ---- signals, query, update -----------------------------------------------------
  setHandler(stateQuery, () => snapshot);
  setHandler(pauseSignal, () => {
    if (snapshot.paused || finished) return;
    stateBeforePause = snapshot.state;
    transition('PAUSED');
    snapshot.paused = true;
    log.info('run paused', { from: stateBeforePause });
  });
  setHandler(resumeSignal, () => {
    if (!snapshot.paused) return;
    snapshot.paused = false;
    transition(stateBeforePause);
    log.info('run resumed', { to: stateBeforePause });
  });
  setHandler(
    feedbackUpdate,
    (text) => {
      pendingFeedback.push(text.trim());
      return { accepted: true as const, pending: pendingFeedback.length };
    },
    {
      validator: (text) => {
        if (finished) throw new Error(`the run has already ended (${snapshot.state})`);
        if (typeof text !== 'string' || text.trim() === '') throw new Error('feedback text is empty');
        if (text.length > MAX_FEEDBACK_CHARS)
          throw new Error(`feedback is longer than ${MAX_FEEDBACK_CHARS} characters`);
      },
    },
  );

  /** No new activity starts while the run is paused. */
  const gate = async (): Promise<void> => {
    await condition(() => !snapshot.paused);
  };

  const countTokens = (usage: { prompt: number; completion: number }): void => {
    snapshot.tokens.prompt += usage.prompt;
    snapshot.tokens.completion += usage.completion;
    const total = snapshot.tokens.prompt + snapshot.tokens.completion;
    if (options.maxTokens !== null && total > options.maxTokens) {
      throw new RunStopped(
        'budget',
        `token budget exceeded: ${total} tokens used, the budget is ${options.maxTokens}`,
      );
    }
  };

  // ---- one agent turn: model steps and the tool calls they ask for ------------------
  let protectedPaths: string[] = carried?.protectedPaths ?? [];
  const runTurn = async (
    role: AgentRole,
    turnKey: string,
    context: Record<string, unknown>,
    recallLessons = false,
  ): Promise<{ finished: unknown } | { error: string }> => {
    await gate();
    const opening = {
      ref: `${runKey}/${turnKey}`,
      model: input.model,
      workspace: input.workspace,
      context: {
        role,
        task: input.task,
        language: input.language,
        attempt: Math.max(1, snapshot.iterations),
        maxIterations: options.maxIterations,
        protectedPaths,
        ...context,
      },
      ...(recallLessons ? { recallLessons: { workflowId: info.workflowId, task: input.task } } : {}),
    };
    const ref = openTurnInFirstStep
      ? opening.ref
      : await local.openAgentTurn.executeWithOptions({ summary: `${role} · start turn` }, [opening]);
    let idleSteps = 0;
    for (let step = 0; step < options.maxStepsPerTurn; step++) {
      await gate();
      const decision = await agents.agentStep.executeWithOptions(
        {
          summary:
            step === 0 && opening.recallLessons
              ? `${role} · recall similar failures, model step 1`
              : `${role} · model step ${step + 1}`,
        },
        [
          {
            ref,
            stepIndex: step,
            timeoutMs: options.modelTimeoutMs,
            ...(openTurnInFirstStep && step === 0 ? { open: opening } : {}),
          },
        ],
      );
      countTokens(decision.usage);
      let anyToolWorked = false;
      for (const call of decision.toolCalls) {
        await gate();
        const summary = `${role} · ${call.name}${call.target ? ` ${call.target}` : ''}`;
        const args = [{ ref, toolCallId: call.id }] as [{ ref: string; toolCallId: string }];
        const outcome =
          call.name === 'create_file'
            ? await local.createFile.executeWithOptions({ summary }, args)
            : call.name === 'delete_file'
              ? await local.deleteFile.executeWithOptions({ summary }, args)
              : call.name === 'read_file'
                ? await local.readFile.executeWithOptions({ summary }, args)
                : await local.listFiles.executeWithOptions({ summary }, args);
        anyToolWorked ||= outcome.ok;
      }
      if (decision.finished !== null) return { finished: decision.finished };
      idleSteps = decision.progress && (anyToolWorked || decision.toolCalls.length === 0) ? 0 : idleSteps + 1;
      if (idleSteps >= MAX_IDLE_STEPS) {
        return {
          error: `${role} made no progress in ${MAX_IDLE_STEPS} steps in a row (only failing calls or no calls)`,
        };
      }
    }
    return { error: `${role} did not call its finishing tool within ${options.maxStepsPerTurn} steps` };
  };

  const recordTurnError = (message: string): void => {
    snapshot.error = message;
    log.warn('agent turn failed', { message });
    publish();
  };

  // ---- the state machine ------------------------------------------------------------
  let plan: Plan | null = carried?.plan ?? null;
  let testsNeeded = carried?.testsNeeded ?? true;
  let testPass = carried?.testPass ?? 0;
  let lastCoderSummary: string | null = null;

  const finish = async (
    state: 'SUCCESS' | 'FAILED',
    reason: FailureReason | null,
    lastAttempt?: RememberAttemptInput,
  ): Promise<RunResult> => {
    snapshot.reason = reason;
    finished = true;
    snapshot.paused = false;
    // What made the difference, stored against this run's earlier failures.
    const fix =
      state === 'SUCCESS' && snapshot.iterations > 1
        ? {
            iteration: snapshot.iterations,
            summary: [
              lastCoderSummary
                ? `Attempt ${snapshot.iterations} passed after: ${lastCoderSummary}`
                : `Attempt ${snapshot.iterations} passed.`,
              snapshot.lastAnalysis
                ? `The analysis that led to it: ${snapshot.lastAnalysis.fixHypothesis}`
                : '',
            ]
              .filter(Boolean)
              .join(' '),
          }
        : null;
    const outcome = {
      workflowId: info.workflowId,
      status: state === 'SUCCESS' ? 'success' : 'failed',
      reason,
      fix,
    } as const;
    remember('outcome', () =>
      lastAttempt
        ? memoryWrites.rememberOutcome.executeWithOptions(
            { summary: `memory · store attempt ${lastAttempt.iteration} and outcome` },
            [{ ...outcome, lastAttempt }],
          )
        : memoryWrites.rememberOutcome.executeWithOptions({ summary: 'memory · store outcome' }, [outcome]),
    );
    await CancellationScope.nonCancellable(async () => {
      if (endInOneStep) {
        setCurrentDetails(`${renderDetails(snapshot)}\n\n_Saving failure memory before the run ends…_`);
        const [files] = await Promise.all([
          local.listRunFiles.executeWithOptions({ summary: 'list workspace files' }, [
            { workspace: input.workspace },
          ]),
          memoryChain,
        ]);
        snapshot.files = files;
        return;
      }
      snapshot.files = await local.listRunFiles.executeWithOptions({ summary: 'list workspace files' }, [
        { workspace: input.workspace },
      ]);
      setCurrentDetails(`${renderDetails(snapshot)}\n\n_Saving failure memory before the run ends…_`);
      await memoryChain;
    });
    if (memoryLost > 0)
      log.error('failure memory records lost after retrying for an hour', { count: memoryLost });
    transition(state);
    runsFinished.add(1, { state, reason: reason ?? 'none' });
    const { paused: _paused, ...result } = snapshot;
    return result;
  };

  try {
    publish();
    const firstIteration = carried?.nextIteration ?? 1;
    if (!carried) {
      ({ protectedPaths } = await local.prepareWorkspace.executeWithOptions(
        { summary: 'prepare workspace' },
        [{ workspace: input.workspace, testsDir: input.testsDir }],
      ));

      const rememberTask = (): void =>
        remember('task', () =>
          memoryWrites.rememberRun.executeWithOptions({ summary: 'memory · store task' }, [
            { workflowId: info.workflowId, task: input.task, language: input.language },
          ]),
        );
      if (!recallInPlannerStep) rememberTask();

      transition('PLANNING');
      await gate();
      let planned: Awaited<ReturnType<typeof runTurn>>;
      if (recallInPlannerStep) {
        try {
          planned = await runTurn('planner', 'planner', {}, true);
        } finally {
          // Queued first in any case, before any other write. Not earlier: on the embedded
          // database's single connection the lookup would wait behind it.
          rememberTask();
        }
      } else {
        const lessons = await recall.recallLessons
          .executeWithOptions({ summary: 'memory · recall similar failures' }, [
            { workflowId: info.workflowId, task: input.task },
          ])
          .catch((err: unknown) => {
            if (isCancellation(err)) throw err;
            log.warn('planning without lessons: failure memory did not answer', {
              error: err instanceof Error ? describeFailure(err) : String(err),
            });
            return [];
          });
        planned = await runTurn('planner', 'planner', { lessons });
      }
      if ('finished' in planned) plan = planned.finished as Plan;
      else recordTurnError(planned.error);
    }

    for (let iteration = firstIteration; ; iteration++) {
      if (iteration > firstIteration && workflowInfo().continueAsNewSuggested) {
        // History is getting long: carry the run's state into a fresh execution.
        await condition(allHandlersFinished);
        await memoryChain;
        const next: CarriedState = {
          snapshot,
          stateBeforePause,
          pendingFeedback,
          protectedPaths,
          plan,
          testsNeeded,
          testPass,
          nextIteration: iteration,
        };
        log.info('continuing as new', { iteration, historyLength: workflowInfo().historyLength });
        await continueAsNew<typeof codingAgentWorkflow>(input, next);
      }
      snapshot.iterations = iteration;
      iterationsStarted.add(1, { language: input.language });
      transition('CODING');
      if (iteration === options.warnAt && options.warnAt < options.maxIterations) {
        snapshot.warning = `iteration ${iteration} of ${options.maxIterations}: ${options.maxIterations - iteration} attempts left before the run fails`;
        log.warn(snapshot.warning);
        publish();
      }
      const feedback = pendingFeedback.splice(0, pendingFeedback.length);
      const coded = await runTurn('coder', `coder-${iteration}`, {
        plan,
        analysis: snapshot.lastAnalysis,
        feedback,
      });
      if ('error' in coded) recordTurnError(coded.error);
      else lastCoderSummary = describeCoderFinish(coded.finished);

      transition('TESTING');
      if (testsNeeded) {
        testPass += 1;
        const tested = await runTurn('tester', `tester-${testPass}`, {
          testPass,
          analysis: snapshot.lastAnalysis,
        });
        if ('error' in tested) recordTurnError(tested.error);
        testsNeeded = false;
      }
      await gate();
      const report = await testing.runTests.executeWithOptions(
        { summary: `tester · run tests (attempt ${iteration})` },
        [
          {
            runKey,
            attempt: iteration,
            workspace: input.workspace,
            language: input.language,
            testsDir: input.testsDir,
            protectedPaths,
          },
        ],
      );
      if (report.sandboxWarning) snapshot.warning = report.sandboxWarning;
      snapshot.passRate = report.passRate;
      snapshot.tests = { passed: report.passed, failed: report.failed, errors: report.errors };
      publish();
      const attempt = {
        workflowId: info.workflowId,
        iteration,
        passRate: report.passRate,
        passed: report.passed,
        failed: report.failed + report.errors,
      };
      if (report.passRate >= 1 && report.failed === 0 && report.errors === 0 && report.passed > 0) {
        const passedAttempt: RememberAttemptInput = {
          ...attempt,
          reportRef: null,
          analysis: null,
          analysisError: null,
        };
        if (endInOneStep) return await finish('SUCCESS', null, passedAttempt);
        remember(`attempt ${iteration}`, () =>
          memoryWrites.rememberAttempt.executeWithOptions(
            { summary: `memory · store attempt ${iteration}` },
            [passedAttempt],
          ),
        );
        return await finish('SUCCESS', null);
      }

      transition('REFLECTING');
      const reflected = await runTurn('reflector', `reflector-${iteration}`, {
        testReportRef: report.reportRef,
      });
      if ('finished' in reflected) {
        snapshot.lastAnalysis = reflected.finished as Analysis;
        testsNeeded = snapshot.lastAnalysis.testsWrong;
      } else {
        recordTurnError(reflected.error);
      }
      const analysis = 'finished' in reflected ? (reflected.finished as Analysis) : null;
      const failure: RememberAttemptInput = {
        ...attempt,
        reportRef: report.reportRef,
        analysis,
        analysisError: 'error' in reflected ? reflected.error : null,
      };
      if (endInOneStep && iteration >= options.maxIterations) {
        publish();
        return await finish('FAILED', 'max_iterations', failure);
      }
      remember(`failure ${iteration}`, () =>
        memoryWrites.rememberAttempt.executeWithOptions(
          { summary: `memory · store failure of attempt ${iteration}` },
          [failure],
        ),
      );
      publish();
      if (iteration >= options.maxIterations) return await finish('FAILED', 'max_iterations');
    }
  } catch (err) {
    if (isCancellation(err)) {
      snapshot.error = 'the run was cancelled';
      return await finish('FAILED', 'cancelled');
    }
    if (err instanceof RunStopped) {
      snapshot.error = err.message;
      return await finish('FAILED', err.reason);
    }
    if (err instanceof ActivityFailure || err instanceof ApplicationFailure) {
      snapshot.error = describeFailure(err);
      log.error('run failed', { error: snapshot.error });
      return await finish('FAILED', 'error');
    }
    throw err;
  }
}

function describeCoderFinish(value: unknown): string | null {
  const summary = (value as { summary?: unknown } | null)?.summary;
  return typeof summary === 'string' && summary.trim() ? summary.trim().slice(0, 500) : null;
}

function describeFailure(err: Error): string {
  let message = err.message;
  let cause = (err as { cause?: unknown }).cause;
  while (cause instanceof Error) {
    message = cause.message || message;
    cause = (cause as { cause?: unknown }).cause;
  }
  return message;
}
