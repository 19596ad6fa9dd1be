import * as fs from 'node:fs';
import * as path from 'node:path';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { HISTORIES_DIR, workflowBundle } from '../helpers/agent-harness';

/**
 * Every saved history must replay against the current workflow code. A change
 * that alters the commands a past run issued fails here; make it with patched().
 */
describe('replay of saved histories', () => {
  const files = fs.existsSync(HISTORIES_DIR)
    ? fs.readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.json'))
    : [];

  test('there are saved histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  test('both sides of every patch are covered: runs recorded before and after it', () => {
    const patchesIn = (file: string): Set<string> => {
      const { events } = JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')) as {
        events: Array<{
          markerRecordedEventAttributes?: {
            markerName?: string;
            details?: Record<string, { payloads?: Array<{ data?: string }> }>;
          };
        }>;
      };
      const ids = new Set<string>();
      for (const e of events) {
        const marker = e.markerRecordedEventAttributes;
        if (marker?.markerName !== 'core_patch') continue;
        for (const payload of marker.details?.['patch-data']?.payloads ?? []) {
          const { id } = JSON.parse(Buffer.from(payload.data ?? '', 'base64').toString('utf8')) as {
            id: string;
          };
          ids.add(id);
        }
      }
      return ids;
    };
    const source = fs.readFileSync(path.resolve(__dirname, '../../src/workflows/coding-agent.ts'), 'utf8');
    const patchIds = [...source.matchAll(/patched\('([^']+)'\)/g)].map((m) => m[1]!);
    expect(patchIds.length).toBeGreaterThan(0);
    const recorded = files.map(patchesIn);
    for (const id of patchIds) {
      const withIt = recorded.filter((ids) => ids.has(id)).length;
      expect({ id, withIt: withIt >= 3, withoutIt: files.length - withIt >= 3 }).toEqual({
        id,
        withIt: true,
        withoutIt: true,
      });
    }
  });

  test('all saved histories replay without nondeterminism', async () => {
    const histories = files.map((file) => ({
      workflowId: path.basename(file, '.json'),
      history: JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8')),
    }));
    const failures: string[] = [];
    for await (const result of Worker.runReplayHistories(
      { workflowBundle: await workflowBundle() },
      histories,
    )) {
      if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
    }
    expect(failures).toEqual([]);
  });

  test('a workflow change that alters the recorded commands is caught', async () => {
    const altered = await bundleWorkflowCode({
      workflowsPath: require.resolve('./altered-workflow'),
      logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
    });
    const file = files.find((f) => f.startsWith('demo-fizzbuzz'))!;
    const history = JSON.parse(fs.readFileSync(path.join(HISTORIES_DIR, file), 'utf8'));
    await expect(Worker.runReplayHistory({ workflowBundle: altered }, history, 'altered')).rejects.toThrow(
      /[Nn]ondetermin/,
    );
  });
});
