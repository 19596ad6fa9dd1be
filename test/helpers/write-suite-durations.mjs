#!/usr/bin/env node
/**
 * Rewrites test/suite-durations.json, the durations test/helpers/slowest-first-sequencer.mjs orders
 * suites by, from a run's test-output/suite-times.json (or the file named as the argument).
 * Suites the run did not include keep their figure while their file exists.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const target = path.join(root, 'test', 'suite-durations.json');
const source = path.resolve(process.argv[2] ?? path.join(root, 'test-output', 'suite-times.json'));

const run = JSON.parse(fs.readFileSync(source, 'utf8'));
const previous = fs.existsSync(target) ? JSON.parse(fs.readFileSync(target, 'utf8')).suites : {};
const seconds = { ...previous };
for (const suite of run.suites) seconds[suite.file] = Math.round(suite.ms / 100) / 10;
const kept = Object.entries(seconds)
  .filter(([file]) => fs.existsSync(path.join(root, file)))
  .sort(([, a], [, b]) => b - a);
fs.writeFileSync(
  target,
  JSON.stringify(
    {
      about:
        'Seconds per suite of a measured run; written by `npm run test:durations`, read to start the longest suites first.',
      suites: Object.fromEntries(kept),
    },
    null,
    2,
  ) + '\n',
);
console.log(`${target}: ${kept.length} suites`);
