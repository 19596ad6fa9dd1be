import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadScenarioFile, loadScenarios, type Scenario } from '../llm/scenario';
import { ScriptedLlmServer } from '../llm/scripted-server';
import { UserInputError } from '../shared/errors';
import { EXIT, type CliIO } from './cli-context';

export const SCRIPTED_MODEL_HELP = `
Serves aca's scripted OpenAI-compatible model: the built-in scenarios and every *.json scenario in
DIR (the format is described in docs/scripted-model.md). Point aca at it with the printed
OPENAI_BASE_URL and run with --model scripted:<scenario>. A scenario of DIR with a built-in's name
replaces it. Runs until Ctrl-C.`;

/** The scenarios of a user's folder, each checked; a bad file is bad input naming it. */
export function userScenarios(dir: string): Scenario[] {
  const folder = path.resolve(dir);
  if (!fs.existsSync(folder) || !fs.statSync(folder).isDirectory()) {
    throw new UserInputError(`--scenarios ${folder} is not a folder`);
  }
  const files = fs
    .readdirSync(folder)
    .filter((name) => name.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new UserInputError(`--scenarios ${folder} holds no .json scenario`);
  return files.map((name) => {
    try {
      return loadScenarioFile(path.join(folder, name));
    } catch (err) {
      throw new UserInputError((err as Error).message);
    }
  });
}

export async function scriptedModelCommand(
  flags: { scenarios?: string; port?: number; host?: string },
  io: CliIO,
  stopped: Promise<void> = interrupted(),
): Promise<number> {
  const own = flags.scenarios === undefined ? [] : userScenarios(flags.scenarios);
  const byName = new Map<string, Scenario>();
  for (const scenario of [...loadScenarios(), ...own]) byName.set(scenario.name, scenario);
  const server = new ScriptedLlmServer({
    scenarios: [...byName.values()],
    port: flags.port ?? 0,
    ...(flags.host ? { host: flags.host } : {}),
  });
  try {
    await server.start();
  } catch (err) {
    throw new UserInputError(`cannot listen on port ${flags.port ?? 0}: ${(err as Error).message}`);
  }
  io.out(`aca scripted model serving ${byName.size} scenarios at ${server.url}`);
  io.out(`  OPENAI_BASE_URL=${server.url}`);
  for (const name of byName.keys()) io.out(`  --model scripted:${name}`);
  await stopped;
  await server.stop();
  return EXIT.success;
}

function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
