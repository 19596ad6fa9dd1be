// Runs the npm scripts named as arguments at the same time (`npm test` runs the type check and the
// lint this way: each is one single-threaded process, and the CI machine has two cores). Each
// script's output is held back and printed whole when it ends, so the two never interleave. Exits
// with the status of the first script that failed, in the order given, or 0.
import { spawn } from 'node:child_process';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/side-by-side.mjs <npm script> [<npm script> ...]');
  process.exit(2);
}

const npm = process.env.npm_execpath
  ? { command: process.execPath, args: [process.env.npm_execpath] }
  : { command: 'npm', args: [] };

function run(name) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(npm.command, [...npm.args, 'run', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks = [];
    child.stdout.on('data', (chunk) => chunks.push(chunk));
    child.stderr.on('data', (chunk) => chunks.push(chunk));
    let finished = false;
    const finish = (status, why) => {
      if (finished) return;
      finished = true;
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(Buffer.concat(chunks));
      console.log(`[side-by-side] npm run ${name}: ${why} after ${seconds} s`);
      resolve(status);
    };
    child.on('error', (err) => finish(1, `could not start (${err.message})`));
    child.on('close', (code, signal) =>
      finish(code ?? 1, code === 0 ? 'passed' : signal ? `killed by ${signal}` : `failed (exit ${code})`),
    );
  });
}

const statuses = await Promise.all(names.map(run));
process.exit(statuses.find((status) => status !== 0) ?? 0);
