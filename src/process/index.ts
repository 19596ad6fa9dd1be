/**
 * Starting processes for the worker: through a small helper process whose forks stay cheap
 * (spawn-helper.ts, its JavaScript in spawn-helper-process.cjs), or directly (spawn-direct.ts).
 * The sandbox starts test processes and the git layer runs git through it; it uses nothing of
 * aca's but src/shared.
 */
export { runViaHelper, sharedHelperPid, SpawnHelper, spawnViaHelper, startSpawnHelper } from './spawn-helper';
export { runDirect, spawnDirect } from './spawn-direct';
export type { RunRequest, RunResult, SpawnedProcess, SpawnRequest } from './spawn-types';
