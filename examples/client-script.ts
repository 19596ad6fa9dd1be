/**
 * A script that drives one aca run: start it, pause it once it is coding, send guidance, resume it
 * and print the result. Connects with the same settings as the `aca` command (TEMPORAL_ADDRESS,
 * ACA_TASK_QUEUE, ACA_MODEL, …); a worker must be polling the task queue.
 *
 *   node client-script.js "Implement fizzbuzz(n) in fizzbuzz.py …"
 */
import { AcaClient, type AcaRun, type RunSnapshot } from 'aca';

async function waitFor(
  run: AcaRun,
  done: (s: RunSnapshot) => boolean,
  timeoutMs = 60_000,
): Promise<RunSnapshot> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const snapshot = await run.state();
    if (done(snapshot)) return snapshot;
    if (Date.now() > deadline) throw new Error(`run ${run.id} did not get there; it is ${snapshot.state}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function main(): Promise<number> {
  const task = process.argv[2];
  if (!task) throw new Error('usage: node client-script.js "<task>"');
  const aca = await AcaClient.connect();
  try {
    const run = await aca.start({ task, maxIterations: 5 });
    console.log(`started ${run.id}`);
    await waitFor(run, (s) => s.state === 'CODING');
    const before = await run.pause();
    console.log(`paused ${run.id} in ${before.state}`);
    const { pending } = await run.feedback('Check n % 15 first, then 3, then 5.');
    console.log(`feedback accepted (${pending} pending)`);
    await run.resume();
    console.log(`resumed ${run.id}`);
    const result = await run.result();
    console.log(JSON.stringify(result));
    return result.state === 'SUCCESS' ? 0 : 1;
  } finally {
    await aca.close();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
    process.exit(2);
  },
);
