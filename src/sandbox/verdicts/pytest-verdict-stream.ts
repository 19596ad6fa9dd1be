import type { TestCaseResult } from '../../shared/types';
import { combinePhases, type StreamResult } from './result-check';
import { parseRecords, PytestVerdictRecord, verifySignedLines } from './results-channel';
import type { VerdictExpectations } from '../runners/runner';

type VerdictCase = Extract<PytestVerdictRecord, { t: 'case' }>;

/** The file a node id belongs to. */
function fileOf(nodeId: string): string {
  const at = nodeId.indexOf('::');
  return at < 0 ? nodeId : nodeId.slice(0, at);
}

/** The test's id without its parameters: what the acceptance file itself names. */
function baseId(nodeId: string): string {
  const bracket = nodeId.indexOf('[');
  return bracket < 0 ? nodeId : nodeId.slice(0, bracket);
}

/**
 * Reads the verdict process's channel (python/pytest_verdict.py). Only lines its audit hook signed
 * count; what the hook saw (tampering, a test body that never returned, a skip raised by the code
 * under test) is evidence against the run, whatever pytest reported.
 */
export function readVerdictStream(text: string, expectations: VerdictExpectations): StreamResult {
  const empty = { cases: [], collectionErrors: [], finished: false };
  const signed = verifySignedLines(text, expectations.key);
  const read = parseRecords(signed.records.map((line) => `${line}\n`).join(''), PytestVerdictRecord);
  if (!read.ok) return { ...empty, problems: [...signed.problems, read.problem] };

  const phases = new Map<string, VerdictCase[]>();
  const collectionErrors: string[] = [];
  const problems: string[] = [...signed.problems];
  let tampering = 0;
  let announcedExit: number | undefined;
  // A sign against one of the repository's own tests voids that test; against an acceptance test,
  // the whole run (see VerdictExpectations.repositoryFiles).
  const voided = new Map<string, string>();
  const against = (id: string, problem: string): void => {
    if (!expectations.repositoryFiles?.has(fileOf(id))) problems.push(problem);
    else if (!voided.has(id)) voided.set(id, `${problem}: counted as an error`);
  };
  for (const record of read.records) {
    if (announcedExit !== undefined) {
      problems.push('the verdict process wrote records after the end of its run');
      break;
    }
    switch (record.t) {
      case 'tamper':
        tampering += 1;
        problems.push(`the code under test reached into the test process: ${record.what}`);
        break;
      case 'collect':
        collectionErrors.push(
          record.outcome === 'failed'
            ? record.id || '(the test session)'
            : `${record.id} (skipped as a whole while loading)`,
        );
        break;
      case 'done':
        announcedExit = record.exit;
        if (record.tampered !== tampering)
          problems.push('the verdict process saw tampering whose records never arrived');
        break;
      case 'case': {
        const seen = phases.get(record.id) ?? [];
        if (seen.some((p) => p.when === record.when))
          problems.push(`${record.id} reported its ${record.when} phase twice`);
        seen.push(record);
        phases.set(record.id, seen);
        for (const problem of phaseProblems(record)) against(record.id, problem);
        break;
      }
    }
  }
  const cases: TestCaseResult[] = [];
  for (const [name, seen] of phases) {
    const status = combinePhases(seen);
    cases.push({ name, status });
    if (status === 'skipped') {
      const problem = skipProblem(name, seen, expectations);
      if (problem) against(name, problem);
    }
    if (status === 'passed' && announcedExit !== undefined && !seen.some((p) => p.when === 'call'))
      against(name, `${name} was reported passed, but its call phase never ran (the run was tampered with)`);
  }
  return {
    cases,
    collectionErrors,
    finished: announcedExit !== undefined,
    ...(announcedExit !== undefined ? { announcedExit } : {}),
    problems,
    ...(voided.size > 0 ? { voided } : {}),
  };
}

function phaseProblems(record: VerdictCase): string[] {
  if (record.outcome !== 'passed') return [];
  if (record.raw !== 'passed')
    return [
      record.raw === 'unknown'
        ? `${record.id} was reported passed by something other than pytest's runner`
        : `${record.id}: its ${record.when} phase ${record.raw === 'failed' ? 'raised an error' : 'was skipped'}, yet it was reported passed`,
    ];
  if (record.when !== 'call' || record.body === 'ran') return [];
  if (record.body === 'rebound')
    return [
      `${record.id}: the names the test file imports no longer referred to what their modules hold when the test ran (the run was tampered with)`,
    ];
  return [
    record.body === 'raised'
      ? `${record.id}: the test function raised an error, yet it was reported passed (the run was tampered with)`
      : `${record.id}: the test function itself never ran, yet it was reported passed (the run was tampered with)`,
  ];
}

/**
 * A skip (or expected failure) is the user's when the acceptance test's own code raised it, or when
 * pytest did for a test whose original asks for one (a skip or xfail mark, a skip call). One raised
 * by other code, or a mark the acceptance file does not carry, is the code under test's doing.
 */
function skipProblem(name: string, seen: VerdictCase[], expectations: VerdictExpectations): string | null {
  const skipped = seen.find((p) => p.outcome === 'skipped');
  if (!skipped) return null;
  if (skipped.skip === 'test') return null;
  if (skipped.skip === 'other')
    return `${name} was skipped by code outside the acceptance tests (the run was tampered with)`;
  if (expectations.maySkip.has(baseId(name))) return null;
  return `${name} was skipped or marked as an expected failure, but its acceptance file asks for neither (the run was tampered with)`;
}
