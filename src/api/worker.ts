// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- ambient types cannot be imported (ms-types.ts)
/// <reference path="./ms-types.ts" preserve="true" />
/**
 * `aca-agent/worker`: aca's worker, or its activities for a worker of your own. Register the workflow
 * by bundling `aca-agent/workflows` (see docs/library.md).
 */
export {
  createAcaActivities,
  createAcaWorker,
  createHostWorkers,
  createRunStores,
  installRuntime,
  runWorker,
  WORKFLOWS_PATH,
  type AcaWorkerOptions,
} from '../worker';
export type { RunStores } from '../store/run-store-repository';
export { createActivities, type Activities, type ActivityDeps } from '../activities';
export { registerSearchAttributes } from '../temporal/search-attributes';
