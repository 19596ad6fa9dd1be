import { EventEmitter } from 'node:events';
import type { SpawnedProcess } from './spawn-types';

/** A started process as its caller sees it, whichever process started it; events can be held. */
export class RelayedProcess extends EventEmitter implements SpawnedProcess {
  private held: Array<[string, unknown[]]> | null = [];

  constructor(
    readonly pid: number,
    private readonly onDestroyPipes: () => void,
  ) {
    super();
  }

  destroyPipes(): void {
    this.onDestroyPipes();
  }

  /** Delivers an event now, or once resume() is called. */
  deliver(event: string, ...args: unknown[]): void {
    if (this.held) this.held.push([event, args]);
    else this.emit(event, ...args);
  }

  resume(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const [event, args] of held) this.emit(event, ...args);
  }
}
