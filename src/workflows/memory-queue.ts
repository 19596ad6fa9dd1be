import { CancellationScope, log } from '@temporalio/workflow';
import { describeFailure } from './describe-failure';

/**
 * Failure-memory writes, queued in order behind each other and immune to the run's cancellation.
 * The run goes on while they retry; it waits for them only before it ends or continues as new.
 */
export class MemoryQueue {
  private chain: Promise<void> = Promise.resolve();
  private lostCount = 0;

  /** `enabled` false: a run without failure memory, whose writes are dropped. */
  constructor(private readonly enabled = true) {}

  add(what: string, write: () => Promise<unknown>): void {
    if (!this.enabled) return;
    this.chain = this.chain.then(() =>
      CancellationScope.nonCancellable(write).then(
        () => undefined,
        (err: unknown) => {
          this.lostCount += 1;
          log.error('failure memory write given up', { what, error: describeFailure(err) });
        },
      ),
    );
  }

  /** Settles when every write queued so far has been stored or given up. */
  drained(): Promise<void> {
    return this.chain;
  }

  get lost(): number {
    return this.lostCount;
  }
}
