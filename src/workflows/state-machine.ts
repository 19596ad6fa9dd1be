import { ApplicationFailure } from '@temporalio/workflow';
import type { AgentState, Transition } from '../shared/types';
import { FAILURE_TYPES } from '../shared/failure-types';

/** A state the run works in or ends in; PAUSED is not one of them but a flag over them. */
export type RunPhase = Exclude<AgentState, 'PAUSED'>;
export type EndState = 'SUCCESS' | 'FAILED';
export type WorkingPhase = Exclude<RunPhase, EndState>;

/**
 * The run's transition table. Besides these moves, a run that is stopped (cancelled, over its
 * budget, an error) goes from any unfinished phase to FAILED, and any unfinished phase can be
 * paused and resumed to the phase the run is in by then.
 */
export const TRANSITIONS: Readonly<Record<RunPhase, readonly RunPhase[]>> = {
  INIT: ['PLANNING'],
  PLANNING: ['CODING'],
  CODING: ['TESTING'],
  TESTING: ['SUCCESS', 'REFLECTING'],
  REFLECTING: ['CODING', 'FAILED'],
  SUCCESS: [],
  FAILED: [],
};

export function isEndState(phase: RunPhase): phase is EndState {
  // A phase with no way out of it is an end; the table says which.
  return TRANSITIONS[phase].length === 0;
}

/** The machine's whole state, as carried across continue-as-new. */
export interface MachineState {
  phase: RunPhase;
  paused: boolean;
  transitions: Transition[];
}

/**
 * Holds the run's phase and whether it is paused, and records every visible move. A paused run
 * may still finish the step it was in and move on underneath the pause (no new step starts until
 * it is resumed); the log shows PAUSED until then.
 */
export class RunStateMachine {
  private current: MachineState;

  constructor(
    from: MachineState | undefined,
    private readonly onChange: () => void,
  ) {
    this.current = from
      ? { ...from, transitions: [...from.transitions] }
      : { phase: 'INIT', paused: false, transitions: [] };
  }

  get phase(): RunPhase {
    return this.current.phase;
  }

  get paused(): boolean {
    return this.current.paused;
  }

  /** The state shown to users: PAUSED while paused, else the phase. */
  get state(): AgentState {
    return this.current.paused ? 'PAUSED' : this.current.phase;
  }

  get transitions(): readonly Transition[] {
    return this.current.transitions;
  }

  get ended(): boolean {
    return isEndState(this.current.phase);
  }

  save(): MachineState {
    return { ...this.current, transitions: [...this.current.transitions] };
  }

  /** A move the table allows; any other fails the run (it would be a bug in the workflow). */
  move(to: RunPhase): void {
    const from = this.current.phase;
    if (!TRANSITIONS[from].includes(to)) {
      throw ApplicationFailure.nonRetryable(
        `the run cannot move from ${from} to ${to}: the state table does not allow it`,
        FAILURE_TYPES.forbiddenStateMove,
      );
    }
    this.enter(to);
  }

  /** Ends a stopped run (cancelled, over budget, an error): FAILED from any unfinished phase. */
  stop(): void {
    if (this.ended) {
      throw ApplicationFailure.nonRetryable(
        `the run cannot be stopped: it has already ended ${this.current.phase}`,
        FAILURE_TYPES.forbiddenStateMove,
      );
    }
    this.enter('FAILED');
  }

  /** Returns false when there is nothing to pause (already paused, or ended). */
  pause(): boolean {
    if (this.current.paused || this.ended) return false;
    this.record(this.current.phase, 'PAUSED');
    this.current.paused = true;
    this.onChange();
    return true;
  }

  resume(): boolean {
    if (!this.current.paused) return false;
    this.current.paused = false;
    this.record('PAUSED', this.current.phase);
    this.onChange();
    return true;
  }

  private enter(to: RunPhase): void {
    const visibleFrom = this.state;
    this.current.phase = to;
    // An ending clears the pause: a finished run has nothing left to resume.
    if (isEndState(to)) this.current.paused = false;
    if (!this.current.paused) this.record(visibleFrom, to);
    this.onChange();
  }

  private record(from: AgentState, to: AgentState): void {
    this.current.transitions.push({ from, to, at: new Date(Date.now()).toISOString() });
  }
}
