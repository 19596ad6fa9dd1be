/**
 * A script that drives one aca run: start it, pause it, send guidance for the next Coder, resume it
 * and print the result. Connects with the same settings as the `aca` command (TEMPORAL_ADDRESS,
 * ACA_TASK_QUEUE, ACA_MODEL, …); a worker must be polling the task queue.
 *
 *   node client-script.js "Implement fizzbuzz(n) in fizzbuzz.py …"
 */
import { AcaClient } from 'aca-agent';

async function main(): Promise<number> {
  const task = process.argv[2];
  if (!task) throw new Error('usage: node client-script.js "<task>"');
  const aca = await AcaClient.connect();
  try {
    const run = await aca.start({ task, maxIterations: 5 });
    console.log(`started ${run.id}`);
    // Paused at once: nothing new starts until resume, and the guidance waits for the next Coder.
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
