/**
 * Starts the longest suites first, so that with two workers no long suite starts last and runs on
 * alone. Jest does this from its cache of earlier runs; a fresh clone (CI) has none, so the
 * durations of a measured run, kept in test/suite-durations.json (rewrite it from the
 * suite-times reporter's output with `npm run test:durations`), come first, then Jest's cache,
 * then Jest's own guess (file size). A suite the file does not know yet is placed as if it took the
 * median time of those it knows.
 *
 * Plain JavaScript (an ES module) because Jest loads the sequencer untransformed.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import Sequencer from '@jest/test-sequencer';

const DURATIONS_FILE = fileURLToPath(new URL('../suite-durations.json', import.meta.url));

function knownDurations(rootDir) {
  try {
    const { suites } = JSON.parse(fs.readFileSync(DURATIONS_FILE, 'utf8'));
    return new Map(Object.entries(suites).map(([file, seconds]) => [path.resolve(rootDir, file), seconds]));
  } catch {
    return new Map();
  }
}

export default class SlowestFirstSequencer extends Sequencer {
  sort(tests) {
    // Jest's order: failed last time first, then by its cached durations, then by size.
    const jestOrder = super.sort(tests);
    if (jestOrder.length === 0) return jestOrder;
    const known = knownDurations(jestOrder[0].context.config.rootDir);
    const rank = new Map(jestOrder.map((test, index) => [test, index]));
    const figures = [...known.values()].sort((a, b) => a - b);
    const median = figures.length > 0 ? figures[Math.floor(figures.length / 2)] : 0;
    const seconds = (test) => (known.has(test.path) ? known.get(test.path) : median);
    return [...jestOrder].sort((a, b) => seconds(b) - seconds(a) || rank.get(a) - rank.get(b));
  }
}
