import type { EvalBatchRef, EvalReport } from '../shared/eval-types';
import { evalDatabase, PgEvalBatchStore, type EvalDatabase } from './batch-repository';
import { FolderBatchStore, readBatchReport, writeBatchOutputs, type EvalBatchStore } from './batch-store';

/**
 * The store a batch names: its folder, or the database this process reaches (DATABASE_URL). A
 * batch kept in the database cannot be served by a process without one: that is a worker set up
 * for another deployment, and it says so rather than read a folder that is not there.
 */
export function openBatchStore(batch: EvalBatchRef, database: EvalDatabase | undefined): EvalBatchStore {
  if (batch.store === 'folder') return new FolderBatchStore(batch.outDir);
  if (!database) {
    throw new Error(
      `batch ${batch.batchId} keeps its instances in the database, and this process has no DATABASE_URL`,
    );
  }
  return new PgEvalBatchStore(() => database.pool(), batch.batchId);
}

/**
 * predictions.jsonl and report.json in `outDir` from a batch kept in the database, on the host
 * that asks (the workers of such a batch may share no folder with it); the full report.
 */
export async function writeOutputsFromDatabase(
  databaseUrl: string,
  batchId: string,
  outDir: string,
): Promise<EvalReport | null> {
  const database = evalDatabase(databaseUrl);
  try {
    const store = openBatchStore({ batchId, outDir, store: 'database' }, database);
    await writeBatchOutputs(store, outDir);
    return readBatchReport(outDir);
  } finally {
    await database.close();
  }
}
