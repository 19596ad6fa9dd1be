/**
 * search_files against a bare `git grep` on a generated repository (20,000 files by default):
 * the same pattern, interleaved repetitions, medians compared. search_files adds the link-refusing
 * folder check, the result limit and the parsing of matches. Goal: at most 1.2x the bare search.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { executeFileTool } from '../src/tools/file-tools';
import { formatPairs, goal, goalText, median, round, type BenchIO, type Goal } from './bench-util';

const run = promisify(execFile);

export const SEARCH_GOAL = 1.2;
const PATTERN = 'def handle_\\w+_needle\\(';
const FILES_PER_FOLDER = 100;

export interface SearchBenchResult {
  part: 'search';
  files: number;
  pattern: string;
  reps: number;
  matches: number;
  gitGrepMedianMs: number;
  searchFilesMedianMs: number;
  ratio: number;
  gitGrepMs: number[];
  searchFilesMs: number[];
  goal: Goal;
}

/** A repository of `files` Python modules in folders of 100, one in 400 holding the needle. */
export async function generateRepository(dir: string, files: number): Promise<number> {
  let needles = 0;
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, 'src', `pkg${Math.floor(i / FILES_PER_FOLDER)}`);
    if (i % FILES_PER_FOLDER === 0) fs.mkdirSync(folder, { recursive: true });
    const lines = [`"""Module ${i}."""`, 'import os', ''];
    for (let f = 0; f < 6; f++)
      lines.push(`def function_${f}_${i}(value):`, `    return value * ${f} + ${i}`, '');
    if (i % 400 === 0) {
      lines.push(`def handle_${i}_needle(request):`, '    return request', '');
      needles++;
    }
    fs.writeFileSync(path.join(folder, `module_${i}.py`), lines.join('\n'));
  }
  fs.writeFileSync(path.join(dir, '.gitignore'), 'build/\n');
  await run('git', ['init', '-q', dir]);
  return needles;
}

export async function runSearchBench(
  options: { files: number; reps: number },
  progress: (message: string) => void,
): Promise<SearchBenchResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'aca-search-bench-'));
  try {
    progress(`generating a repository of ${options.files} files`);
    const needles = await generateRepository(dir, options.files);
    const bare = async (): Promise<number> => {
      const { stdout } = await run(
        'git',
        ['grep', '--no-index', '--exclude-standard', '-n', '-I', '-P', '-e', PATTERN],
        {
          cwd: dir,
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      return stdout.split('\n').filter(Boolean).length;
    };
    const tool = async (): Promise<number> => {
      const answer = await executeFileTool(
        { workspace: dir, protectedPaths: [] },
        'search_files',
        JSON.stringify({ pattern: PATTERN, max_results: 500 }),
      );
      if (!answer.ok) throw new Error(`search_files failed: ${answer.error}`);
      return (answer.matches as unknown[]).length;
    };
    // Warm the page cache for both before timing.
    const expected = await bare();
    const found = await tool();
    if (expected !== needles || found !== needles) {
      throw new Error(`expected ${needles} matches, git grep found ${expected} and search_files ${found}`);
    }
    const gitGrepMs: number[] = [];
    const searchFilesMs: number[] = [];
    for (let rep = 0; rep < options.reps; rep++) {
      for (const [measure, into] of rep % 2 === 0
        ? ([
            [bare, gitGrepMs],
            [tool, searchFilesMs],
          ] as const)
        : ([
            [tool, searchFilesMs],
            [bare, gitGrepMs],
          ] as const)) {
        const started = performance.now();
        await measure();
        into.push(round(performance.now() - started));
      }
      progress(
        `rep ${rep + 1}/${options.reps}: git grep ${gitGrepMs.at(-1)} ms, search_files ${searchFilesMs.at(-1)} ms`,
      );
    }
    const gitGrepMedianMs = round(median(gitGrepMs));
    const searchFilesMedianMs = round(median(searchFilesMs));
    const ratio = round(searchFilesMedianMs / gitGrepMedianMs, 3);
    return {
      part: 'search',
      files: options.files,
      pattern: PATTERN,
      reps: options.reps,
      matches: needles,
      gitGrepMedianMs,
      searchFilesMedianMs,
      ratio,
      gitGrepMs,
      searchFilesMs,
      goal: goal(`search_files / git grep on ${options.files} files`, ratio, SEARCH_GOAL),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function searchReport(r: SearchBenchResult, io: BenchIO): void {
  io.out(
    `\n== Search: search_files against git grep on a generated repository of ${r.files} files, ${r.reps} runs each ==`,
  );
  for (const line of formatPairs([
    ['pattern', r.pattern],
    ['matches', r.matches],
    ['git grep median', `${r.gitGrepMedianMs} ms`],
    ['search_files median', `${r.searchFilesMedianMs} ms`],
    ['ratio', r.ratio],
    ['result', goalText(r.goal)],
  ]))
    io.out(line);
}
