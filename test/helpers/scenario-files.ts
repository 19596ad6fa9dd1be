/** The scripted-model scenarios of test/scenarios and the acceptance tests they carry, as files. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadScenarioFile, type Scenario } from '../../src/llm/scenario';

export function testScenario(name: string): Scenario {
  return loadScenarioFile(path.resolve(__dirname, '..', 'scenarios', `${name}.json`));
}

/** A new folder holding the scenario's acceptance tests, for `--tests`; the caller removes it. */
export function acceptanceTestsFolder(scenario: Scenario): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `aca-tests-${scenario.name}-`));
  for (const [file, text] of Object.entries(scenario.acceptanceTests ?? {})) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}
