import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { z } from 'zod';

/**
 * A JUnit XML report read through fast-xml-parser and checked against the schema below. The
 * report is written next to model-written code: its size is bounded before it gets here
 * (report-file.ts), a document type declaration is refused (no entity definitions, so no entity
 * expansion), and anything malformed or of another shape throws.
 */
const OUTCOME_TAGS = ['failure', 'error', 'skipped'] as const;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  attributesGroupName: 'attrs',
  textNodeName: 'text',
  alwaysCreateTextNode: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: true,
  // Numeric character references (&#65;) are decoded too.
  htmlEntities: true,
  isArray: (name) =>
    name === 'testsuite' || name === 'testcase' || (OUTCOME_TAGS as readonly string[]).includes(name),
});

const attrs = <T extends z.ZodRawShape>(shape: T) => z.object(shape).catchall(z.string());
const Outcome = z.object({
  text: z.string().default(''),
  attrs: attrs({ message: z.string().optional() }).default({}),
});
const TestCase = z.object({
  attrs: attrs({ name: z.string(), classname: z.string().optional(), file: z.string().optional() }),
  failure: z.array(Outcome).optional(),
  error: z.array(Outcome).optional(),
  skipped: z.array(Outcome).optional(),
});
interface Suite {
  name: string | undefined;
  testcase: z.infer<typeof TestCase>[];
  testsuite: Suite[];
}
// Suites nest: Node's reporter writes one per `describe`, with the file's top-level tests beside them.
const TestSuite: z.ZodType<Suite> = z.lazy(() =>
  z
    .object({
      attrs: attrs({ name: z.string().optional() }).optional(),
      testcase: z.array(TestCase).default([]),
      testsuite: z.array(TestSuite).default([]),
    })
    .transform(({ attrs, testcase, testsuite }) => ({ name: attrs?.name, testcase, testsuite })),
);
const Document = z.union([
  z.object({
    testsuites: z.object({
      testsuite: z.array(TestSuite).default([]),
      testcase: z.array(TestCase).default([]),
    }),
  }),
  z.object({ testsuite: z.array(TestSuite) }),
]);

export type JunitOutcome = z.infer<typeof Outcome> & { kind: (typeof OUTCOME_TAGS)[number] };
export interface JunitCase {
  name: string;
  classname?: string;
  /** The test file, where the runner says (mocha does). */
  file?: string;
  /** Names of the suites the case is in, outermost first (a file, a session or a `describe`, by runner). */
  suites: string[];
  outcomes: JunitOutcome[];
}

/** Every test case of the report, suite by suite, with its failure, error and skipped children. */
export function readJunitCases(xml: string): JunitCase[] {
  if (/<!DOCTYPE/i.test(xml)) throw new Error('the JUnit report declares a document type, which is refused');
  const valid = XMLValidator.validate(xml);
  if (valid !== true)
    throw new Error(`the JUnit report is not well-formed XML: ${valid.err.msg} (line ${valid.err.line})`);
  const parsed = Document.safeParse(parser.parse(xml));
  if (!parsed.success)
    throw new Error(`the JUnit report has an unexpected shape: ${parsed.error.issues[0]?.message}`);
  if ('testsuites' in parsed.data) {
    const { testcase, testsuite } = parsed.data.testsuites;
    return [...testcase.map((c) => junitCase(c, [])), ...testsuite.flatMap((suite) => suiteCases(suite, []))];
  }
  return parsed.data.testsuite.flatMap((suite) => suiteCases(suite, []));
}

function suiteCases(suite: Suite, outer: string[]): JunitCase[] {
  const suites = [...outer, suite.name ?? ''];
  return [
    ...suite.testcase.map((c) => junitCase(c, suites)),
    ...suite.testsuite.flatMap((child) => suiteCases(child, suites)),
  ];
}

function junitCase(c: z.infer<typeof TestCase>, suites: string[]): JunitCase {
  return {
    name: c.attrs.name,
    ...(c.attrs.classname !== undefined ? { classname: c.attrs.classname } : {}),
    ...(c.attrs.file !== undefined ? { file: c.attrs.file } : {}),
    suites,
    outcomes: OUTCOME_TAGS.flatMap((kind) => (c[kind] ?? []).map((o) => ({ ...o, kind }))),
  };
}
