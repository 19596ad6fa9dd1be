import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RunSnapshot } from '../shared/run-types';

export const pauseSignal = defineSignal('pause');
export const resumeSignal = defineSignal('resume');
export const stateQuery = defineQuery<RunSnapshot>('state');
export const feedbackUpdate = defineUpdate<{ accepted: true; pending: number }, [string]>('feedback');

export const MAX_FEEDBACK_CHARS = 4000;
