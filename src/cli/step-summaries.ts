import type { WorkflowClient } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';

/** Events read per page from the end of a history: a pending step was scheduled among the last few. */
const PAGE_SIZE = 50;
/** Pages read at most for one look-up: a step not found there is shown by its activity type. */
const MAX_PAGES = 2;

/**
 * The summaries the workflow gives its steps ("coder · edit_file src/x.py", shown by the Web UI
 * too). describe() lists pending activities without them: each one's summary is on the event
 * that scheduled it, read once from the end of the history and kept.
 */
export class StepSummaries {
  private readonly known = new Map<string, string | null>();

  constructor(
    private readonly client: {
      workflowService: WorkflowClient['workflowService'];
      options: { namespace: string };
    },
  ) {}

  /** The summary of each of `activityIds` of the run `runId`; null where none was found. */
  async lookUp(
    workflowId: string,
    runId: string,
    activityIds: string[],
  ): Promise<(id: string) => string | null> {
    const key = (id: string) => `${runId}/${id}`;
    const missing = new Set(activityIds.filter((id) => !this.known.has(key(id))));
    let nextPageToken: Uint8Array | undefined;
    for (let page = 0; page < MAX_PAGES && missing.size > 0; page++) {
      const response = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
        namespace: this.client.options.namespace,
        execution: { workflowId, runId },
        maximumPageSize: PAGE_SIZE,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
      for (const event of response.history?.events ?? []) {
        const activityId = event.activityTaskScheduledEventAttributes?.activityId;
        if (!activityId || !missing.has(activityId)) continue;
        missing.delete(activityId);
        this.known.set(key(activityId), summaryText(event.userMetadata?.summary));
      }
      if (!response.nextPageToken?.length) break;
      nextPageToken = response.nextPageToken;
    }
    for (const id of missing) this.known.set(key(id), null);
    return (id) => this.known.get(key(id)) ?? null;
  }
}

function summaryText(payload: Parameters<typeof defaultPayloadConverter.fromPayload>[0] | null | undefined) {
  if (!payload) return null;
  try {
    const value: unknown = defaultPayloadConverter.fromPayload(payload);
    return typeof value === 'string' && value.trim() ? value : null;
  } catch {
    return null;
  }
}
