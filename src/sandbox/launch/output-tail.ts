/**
 * Keeps only the last `capacity` bytes of a stream. A test can write gigabytes;
 * the worker must hold a fixed amount however much arrives, and the agent only
 * needs the end (where the failure summary is) anyway.
 */
export class OutputTail {
  private readonly buffer: Buffer;
  private start = 0;
  private length = 0;
  private total = 0;

  constructor(private readonly capacity: number) {
    this.buffer = Buffer.alloc(capacity);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    // Only the chunk's own tail can survive; copying the rest would be wasted work.
    const data = chunk.length > this.capacity ? chunk.subarray(chunk.length - this.capacity) : chunk;
    let end = (this.start + this.length) % this.capacity;
    let offset = 0;
    while (offset < data.length) {
      const n = Math.min(data.length - offset, this.capacity - end);
      data.copy(this.buffer, end, offset, offset + n);
      offset += n;
      end = (end + n) % this.capacity;
    }
    const overflow = this.length + data.length - this.capacity;
    if (overflow > 0) {
      this.start = (this.start + overflow) % this.capacity;
      this.length = this.capacity;
    } else {
      this.length += data.length;
    }
  }

  /** Bytes received but no longer kept. */
  get cutBytes(): number {
    return this.total - this.length;
  }

  get totalBytes(): number {
    return this.total;
  }

  toString(): string {
    const head = this.buffer.subarray(this.start, Math.min(this.start + this.length, this.capacity));
    const wrapped =
      this.start + this.length > this.capacity
        ? this.buffer.subarray(0, this.start + this.length - this.capacity)
        : Buffer.alloc(0);
    // A cut can land inside a multi-byte character; the decoder replaces it rather than throwing.
    return Buffer.concat([head, wrapped]).toString('utf8');
  }
}
