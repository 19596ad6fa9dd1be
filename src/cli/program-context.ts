import { Option } from 'commander';
import { AcaClient } from '../api/aca-client';
import type { AcaConfig } from '../config';
import type { CliIO } from './cli-context';
import { givenOrLatestRun } from './latest-run';

/** What the command groups of the `aca` program (program-*.ts) share. */
export interface ProgramContext {
  io: CliIO;
  /** The configuration, read when a command runs rather than when the program is built. */
  config: () => AcaConfig;
  /** Sets the exit code the command that ran ends with. */
  set: (code: number) => void;
}

export const LATEST_RUN =
  'run id (default: the latest run started from this repository or folder, else with this ACA_HOME)';

export const jsonOption = (): Option => new Option('--json', 'print one JSON object instead of text');

export async function withClient<T>(config: AcaConfig, work: (aca: AcaClient) => Promise<T>): Promise<T> {
  const aca = await AcaClient.connect({ config });
  try {
    return await work(aca);
  } finally {
    await aca.close();
  }
}

/** A command on the run given, or on the latest one started here (see latest-run.ts). */
export async function withRunOf(
  ctx: ProgramContext,
  id: string | undefined,
  work: (aca: AcaClient, run: string) => Promise<number>,
): Promise<number> {
  const cfg = ctx.config();
  const run = await givenOrLatestRun(id, cfg, ctx.io);
  return withClient(cfg, (aca) => work(aca, run));
}
