import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunSnapshot } from '../shared/run-types';

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const stateQuery = defineQuery<RunSnapshot>('state');
export const feedbackUpdate = defineUpdate<{ accepted: true; pending: number }, [string]>('feedback');

export const MAX_FEEDBACK_CHARS = 4000;

export interface ExtendRequest {
  iterations: number;
  feedback?: string;
}
/** Gives a run waiting at its limit more attempts; answers with its new limit. */
export const extendUpdate = defineUpdate<{ maxIterations: number }, [ExtendRequest]>('extend');
