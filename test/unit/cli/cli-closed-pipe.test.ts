import { spawn } from 'node:child_process';
import { ACA_BIN } from '../../helpers/run-cli';

// The built CLI (dist/, made by `npm run build` before Jest in `npm test`).
test('a reader that closes the pipe early ends aca quietly, as `aca --help | head -1` does', async () => {
  const child = spawn(process.execPath, [ACA_BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // Closing the read end before aca writes makes its first write fail with EPIPE.
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  expect(stderr).not.toMatch(/EPIPE|Unhandled|throw/);
  expect(code).toBe(0);
});
