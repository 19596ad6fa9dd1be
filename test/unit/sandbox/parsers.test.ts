import {
  mochaCaseId,
  nodeTestCaseId,
  OutputTail,
  parseJestReport,
  parseJunit,
  parseJunitReport,
} from '../../../src/sandbox';

describe('OutputTail', () => {
  test('keeps exactly the last bytes across wraps and oversized chunks', () => {
    const tail = new OutputTail(10);
    let all = '';
    for (const piece of ['abc', 'defgh', 'ij', 'klmnopq', 'r', '0123456789ABCDEFGHIJ', 'xyz']) {
      tail.push(Buffer.from(piece));
      all += piece;
      expect(tail.toString()).toBe(all.slice(-10));
      expect(tail.cutBytes).toBe(Math.max(0, all.length - 10));
    }
  });
});

describe('parseJunit', () => {
  const xml = (cases: string): string =>
    `<testsuites><testsuite name="pytest">${cases}</testsuite></testsuites>`;

  test('maps failure, error and skipped children to statuses', () => {
    const parsed = parseJunit(
      xml(
        '<testcase classname="t" name="ok"/>' +
          '<testcase classname="t" name="bad"><failure message="assert 1 == 2">trace</failure></testcase>' +
          '<testcase classname="t" name="err"><error message="setup">boom</error></testcase>' +
          '<testcase classname="t" name="sk"><skipped message="later"/></testcase>',
      ),
      1,
    );
    expect(parsed.collectionError).toBeUndefined();
    expect(parsed.cases.map((c) => [c.name, c.status])).toEqual([
      ['t::ok', 'passed'],
      ['t::bad', 'failed'],
      ['t::err', 'error'],
      ['t::sk', 'skipped'],
    ]);
    expect(parsed.cases[1].message).toBe('assert 1 == 2\ntrace');
  });

  test('a collection failure or a broken run is a collection error', () => {
    expect(
      parseJunit(
        xml(
          '<testcase classname="" name="test_x"><error message="collection failure">SyntaxError: bad</error></testcase>',
        ),
        2,
      ).collectionError,
    ).toMatch(/SyntaxError/);
    expect(parseJunit(xml(''), 4).collectionError).toMatch(/code 4/);
    expect(parseJunit(xml(''), 5)).toEqual({ cases: [] });
  });

  test('entities, character references and CDATA are decoded; a bare testsuite root is read too', () => {
    const parsed = parseJunit(
      '<?xml version="1.0"?><!-- c --><testsuite name="s"><testcase classname="t" name="a &lt; b"><failure message="x &amp; y">&#65;&#x42; <![CDATA[<raw>]]></failure></testcase></testsuite>',
      1,
    );
    expect(parsed.cases).toEqual([{ name: 't::a < b', status: 'failed', message: 'x & y\nAB <raw>' }]);
  });

  test('malformed documents, other shapes and document type declarations are refused', () => {
    expect(() => parseJunit('<testsuites><testsuite></testsuites>', 1)).toThrow(/not well-formed/);
    expect(() => parseJunit('<report><case/></report>', 1)).toThrow(/unexpected shape/);
    expect(() => parseJunit(xml('<testcase classname="t"/>'), 1)).toThrow(/unexpected shape/);
    const billionLaughs = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><testsuites><testsuite><testcase classname="t" name="&lol2;"/></testsuite></testsuites>`;
    expect(() => parseJunit(billionLaughs, 1)).toThrow(/document type/);
  });
});

describe('parseJestReport', () => {
  test('rejects a report of the wrong shape', () => {
    expect(() => parseJestReport({ testResults: 'nope' }, '/w')).toThrow();
  });

  test('maps statuses and suites that failed to run', () => {
    const parsed = parseJestReport(
      {
        numRuntimeErrorTestSuites: 1,
        testResults: [
          {
            name: '/w/a.test.ts',
            status: 'failed',
            message: '',
            assertionResults: [
              { fullName: 'a works', status: 'passed', failureMessages: [] },
              { fullName: 'a fails', status: 'failed', failureMessages: ['\u001b[31mExpected: 5\u001b[39m'] },
              { fullName: 'a later', status: 'todo', failureMessages: [] },
            ],
          },
          { name: '/w/b.test.ts', status: 'failed', message: 'SyntaxError: nope', assertionResults: [] },
        ],
      },
      '/w',
    );
    expect(parsed.cases).toEqual([
      { name: 'a.test.ts::a works', status: 'passed' },
      { name: 'a.test.ts::a fails', status: 'failed', message: 'Expected: 5' },
      { name: 'a.test.ts::a later', status: 'skipped' },
      { name: 'b.test.ts', status: 'error', message: 'SyntaxError: nope' },
    ]);
    expect(parsed.collectionError).toMatch(/b\.test\.ts: SyntaxError: nope/);
  });
});

describe('JUnit reports of project runners', () => {
  const names = (xml: string, id?: Parameters<typeof parseJunitReport>[2]): string[] =>
    parseJunitReport(xml, '/workspace', id).cases.map((c) => c.name);

  test('<classname>::<name>, with absolute paths inside the workspace made relative', () => {
    expect(
      names(
        '<testsuites><testsuite name="s">' +
          '<testcase classname="/workspace/src/a.test.js" name="adds"/>' +
          '<testcase classname="/elsewhere/b.js" name="x"/>' +
          '<testcase classname="pkg.module" name="y"/>' +
          '<testcase name="/workspace/loose.js"/>' +
          '</testsuite></testsuites>',
      ),
    ).toEqual(['src/a.test.js::adds', '/elsewhere/b.js::x', 'pkg.module::y', 'loose.js']);
  });

  test("node's report: cases beside suites and nested suites, named by their suites", () => {
    const xml =
      '<testsuites>' +
      '<testcase name="top" classname="test"/>' +
      '<testsuite name="outer"><testcase name="a" classname="test"/>' +
      '<testsuite name="inner"><testcase name="b" classname="test"><skipped type="todo"/></testcase></testsuite>' +
      '</testsuite>' +
      '<testcase name="/workspace/test/broken.test.js" classname="test"><failure message="test failed"/></testcase>' +
      '</testsuites>';
    expect(names(xml, nodeTestCaseId)).toEqual([
      'test::top',
      'test::test/broken.test.js',
      'test::outer > a',
      'test::outer > inner > b',
    ]);
    expect(parseJunitReport(xml, '/workspace', nodeTestCaseId).cases.map((c) => c.status)).toEqual([
      'passed',
      'failed',
      'passed',
      'skipped',
    ]);
  });

  test("mocha's report: the file and the full title", () => {
    const xml =
      '<testsuite name="Mocha Tests">' +
      '<testcase classname="" name="top" file="/workspace/test/a.spec.js"/>' +
      '<testcase classname="math inner" name="deep" file="/workspace/test/a.spec.js"/>' +
      '<testcase classname="no file" name="x"/>' +
      '</testsuite>';
    expect(names(xml, mochaCaseId)).toEqual([
      'test/a.spec.js::top',
      'test/a.spec.js::math inner deep',
      'no file::x',
    ]);
  });
});
