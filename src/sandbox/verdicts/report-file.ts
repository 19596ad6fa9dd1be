/**
 * Reads a runner's report without trusting what the tests could do to it: they run beside the
 * folder it is written to and may replace it with a link, a folder or a FIFO, or write a report so
 * large, or of so many elements, that parsing it would stall or exhaust the worker. Sizes are
 * checked before anything is parsed; what fails a check is refused with a reason, which the run
 * reports as a failed attempt.
 */
import * as fs from 'node:fs';

const MiB = 1024 * 1024;
/** Far above a real suite's report (10,000 tests with messages are a few MiB). */
export const MAX_REPORT_BYTES = 8 * MiB;
/** Elements (XML) or objects and arrays (JSON) a report may hold; 10,000 tests need ~30,000. */
export const MAX_REPORT_ELEMENTS = 50_000;

export type ReportRead =
  { kind: 'absent' } | { kind: 'refused'; reason: string } | { kind: 'read'; text: string };

/** `what` names the file in the reasons given (a project's package.json is read the same way). */
export function readBoundedReport(file: string, format: 'xml' | 'json', what = 'the report'): ReportRead {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'absent' };
    if (code === 'ELOOP') return { kind: 'refused', reason: `${what} path is a symbolic link` };
    return { kind: 'refused', reason: `${what} cannot be opened (${code ?? String(err)})` };
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) {
      return {
        kind: 'refused',
        reason: `${what} path is not a regular file (a folder, FIFO or device was put there)`,
      };
    }
    if (st.size > MAX_REPORT_BYTES) {
      return {
        kind: 'refused',
        reason: `${what} is ${st.size} bytes, over the limit of ${MAX_REPORT_BYTES}`,
      };
    }
    // Read at most one byte over the limit: the file may still be growing.
    const buffer = Buffer.alloc(MAX_REPORT_BYTES + 1);
    let length = 0;
    for (;;) {
      const n = fs.readSync(fd, buffer, length, buffer.length - length, length);
      if (n === 0) break;
      length += n;
      if (length > MAX_REPORT_BYTES) {
        return { kind: 'refused', reason: `${what} grew over the limit of ${MAX_REPORT_BYTES} bytes` };
      }
    }
    const text = buffer.toString('utf8', 0, length);
    const elements = countElements(text, format);
    if (elements > MAX_REPORT_ELEMENTS) {
      return {
        kind: 'refused',
        reason: `${what} holds ${elements} elements, over the limit of ${MAX_REPORT_ELEMENTS}`,
      };
    }
    return { kind: 'read', text };
  } finally {
    fs.closeSync(fd);
  }
}

/** An upper bound on the nodes a parser would build: one per `<`, or per `{` and `[`. */
function countElements(text: string, format: 'xml' | 'json'): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (format === 'xml' ? c === 60 : c === 123 || c === 91) count++;
  }
  return count;
}
