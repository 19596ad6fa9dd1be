import { createHmac, randomBytes } from 'node:crypto';
import { readVerdictStream } from '../../../src/sandbox';

const key = randomBytes(32);

/** Lines as the verdict process's audit hook writes them: numbered, then signed. */
function signed(records: Record<string, unknown>[], signingKey = key): string {
  return records
    .map((record, n) => {
      const body = JSON.stringify({ ...record, n });
      return `${body}\t${createHmac('sha256', signingKey).update(body).digest('hex')}\n`;
    })
    .join('');
}

const phase = (id: string, when: string, outcome: string, extra: Record<string, unknown> = {}) => ({
  t: 'case',
  id,
  when,
  outcome,
  raw: outcome,
  body: when === 'call' ? 'ran' : 'unknown',
  xfail: false,
  skip: 'none',
  ...extra,
});
const passing = (id: string) => ['setup', 'call', 'teardown'].map((when) => phase(id, when, 'passed'));
const expectations = (maySkip: string[] = []) => ({ key, maySkip: new Set(maySkip) });

describe('the verdict stream', () => {
  test('signed records of passing tests read as passes', () => {
    const stream = readVerdictStream(
      signed([...passing('t.py::test_a'), { t: 'done', exit: 0, tampered: 0 }]),
      expectations(),
    );
    expect(stream.problems).toEqual([]);
    expect(stream.cases).toEqual([{ name: 't.py::test_a', status: 'passed' }]);
    expect(stream.finished).toBe(true);
  });

  test('a line signed with another key, or not at all, is not the verdict process’s', () => {
    const forged = signed([...passing('t.py::test_a'), { t: 'done', exit: 0, tampered: 0 }], randomBytes(32));
    expect(readVerdictStream(forged, expectations()).problems[0]).toMatch(
      /not written by aca's verdict process/,
    );
    const unsigned = '{"t":"done","exit":0,"tampered":0,"n":0}\n';
    expect(readVerdictStream(unsigned, expectations()).problems[0]).toMatch(/not written/);
  });

  test('records out of order or repeated are seen', () => {
    const lines = signed([...passing('t.py::test_a'), { t: 'done', exit: 0, tampered: 0 }]).split('\n');
    const swapped = [lines[1], lines[0], ...lines.slice(2)].join('\n');
    expect(readVerdictStream(swapped, expectations()).problems).toContain(
      'the results channel lost or repeated a record of the verdict process',
    );
  });

  test('tampering the hook saw, and a body that never returned, fail the run', () => {
    const stream = readVerdictStream(
      signed([
        { t: 'tamper', what: 'gc.get_objects: a walk of the object graph' },
        phase('t.py::test_a', 'setup', 'passed'),
        phase('t.py::test_a', 'call', 'passed', { body: 'not_run' }),
        phase('t.py::test_a', 'teardown', 'passed'),
        phase('t.py::test_b', 'call', 'passed', { body: 'rebound' }),
        { t: 'done', exit: 0, tampered: 1 },
      ]),
      expectations(),
    );
    expect(stream.problems).toEqual([
      'the code under test reached into the test process: gc.get_objects: a walk of the object graph',
      't.py::test_a: the test function itself never ran, yet it was reported passed (the run was tampered with)',
      't.py::test_b: the names the test file imports no longer referred to what their modules hold when the test ran (the run was tampered with)',
    ]);
  });

  test('a done record that counts tampering whose records never arrived', () => {
    const stream = readVerdictStream(signed([{ t: 'done', exit: 0, tampered: 2 }]), expectations());
    expect(stream.problems).toEqual(['the verdict process saw tampering whose records never arrived']);
  });

  test('skips: the test’s own, a mark the file carries, or tampering', () => {
    const skipped = (id: string, skip: string) => [
      phase(id, 'setup', 'skipped', { skip }),
      phase(id, 'teardown', 'passed'),
    ];
    const stream = readVerdictStream(
      signed([
        ...skipped('t.py::test_own', 'test'),
        ...skipped('t.py::test_marked[1]', 'pytest'),
        ...skipped('t.py::test_unmarked', 'pytest'),
        ...skipped('t.py::test_by_solution', 'other'),
        { t: 'done', exit: 0, tampered: 0 },
      ]),
      expectations(['t.py::test_marked']),
    );
    expect(stream.cases.map((c) => c.status)).toEqual(['skipped', 'skipped', 'skipped', 'skipped']);
    expect(stream.problems).toEqual([
      't.py::test_unmarked was skipped or marked as an expected failure, but its acceptance file asks for neither (the run was tampered with)',
      't.py::test_by_solution was skipped by code outside the acceptance tests (the run was tampered with)',
    ]);
  });
});
