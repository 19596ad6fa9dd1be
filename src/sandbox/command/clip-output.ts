/**
 * One output stream of an agent's command, kept as its beginning and its end. A command can write
 * gigabytes; the worker holds at most `headBytes + 2 * tailBytes` however much arrives, and what
 * an agent needs is usually at either end (the command's first complaint, the summary at the end).
 */
export class HeadTailCapture {
  private readonly head: Buffer;
  private headLength = 0;
  /** Chunks after the head, of which only the last `tailBytes` bytes are kept. */
  private tail: Buffer[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(
    readonly headBytes: number,
    readonly tailBytes: number,
  ) {
    if (!Number.isInteger(headBytes) || headBytes < 0 || !Number.isInteger(tailBytes) || tailBytes < 0) {
      throw new Error(
        `head and tail sizes must be whole numbers of bytes, got ${headBytes} and ${tailBytes}`,
      );
    }
    this.head = Buffer.alloc(headBytes);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    const intoHead = Math.min(chunk.length, this.headBytes - this.headLength);
    if (intoHead > 0) {
      chunk.copy(this.head, this.headLength, 0, intoHead);
      this.headLength += intoHead;
    }
    if (intoHead === chunk.length || this.tailBytes === 0) return;
    // Copied: the chunk's buffer may be a slice of something larger that would be kept alive.
    this.tail.push(Buffer.from(chunk.subarray(intoHead)));
    this.tailLength += chunk.length - intoHead;
    // Compacted only once twice the tail has piled up, so each byte is copied a bounded number of times.
    if (this.tailLength > 2 * this.tailBytes) this.compact();
  }

  get totalBytes(): number {
    return this.total;
  }

  /**
   * The stream as text: whole when it fits in `headBytes + tailBytes` (at most what is kept),
   * else its first `headBytes` and last `tailBytes` bytes with a line saying how many were cut.
   */
  clipped(headBytes = this.headBytes, tailBytes = this.tailBytes): string {
    const head = Math.min(headBytes, this.headBytes);
    const tail = Math.min(tailBytes, this.tailBytes);
    if (this.total <= head + tail) return decode(this.bytesKept());
    const kept = this.bytesKept();
    // The bytes kept are the stream itself when nothing was dropped between head and tail.
    const contiguous = kept.length === this.total;
    const first = this.head.subarray(0, Math.min(head, this.headLength));
    const after = contiguous ? kept.subarray(first.length) : this.tailView();
    const last = after.subarray(Math.max(0, after.length - tail));
    return clipText(decode(first), decode(last), this.total - first.length - last.length);
  }

  private bytesKept(): Buffer {
    return Buffer.concat([this.head.subarray(0, this.headLength), this.tailView()]);
  }

  private tailView(): Buffer {
    this.compact();
    return this.tail[0] ?? Buffer.alloc(0);
  }

  private compact(): void {
    if (this.tail.length <= 1 && this.tailLength <= this.tailBytes) return;
    const all = Buffer.concat(this.tail);
    const last = Buffer.from(all.subarray(Math.max(0, all.length - this.tailBytes)));
    this.tail = [last];
    this.tailLength = last.length;
  }
}

/** The marker between a clipped stream's head and tail. */
export function cutMarker(cutBytes: number): string {
  return `... ${cutBytes} bytes cut ...`;
}

/** `head` and `tail` joined by the marker, each on lines of their own. */
export function clipText(head: string, tail: string, cutBytes: number): string {
  if (cutBytes <= 0) return head + tail;
  const before = head === '' || head.endsWith('\n') ? head : `${head}\n`;
  return `${before}${cutMarker(cutBytes)}\n${tail}`;
}

/** A cut can land inside a multi-byte character: the decoder shows it as U+FFFD rather than throw. */
function decode(bytes: Buffer): string {
  return bytes.toString('utf8');
}
