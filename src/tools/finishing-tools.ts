import { z } from 'zod';
import { clipEnd } from '../shared/clip-text';
import { defineFinishingTool } from './tool';

/** What a finishing call yields travels through workflow history: every field is bounded. */
const MAX_FIELD_CHARS = 4000;
const MAX_LIST_ITEMS = 50;
const field = (text: string): string => clipEnd(text, MAX_FIELD_CHARS);
const list = (items: string[]): string[] => items.slice(0, MAX_LIST_ITEMS).map(field);
const stringList = z.array(z.string());

export const finishTool = defineFinishingTool({
  name: 'finish',
  description: 'End your turn once your work is done.',
  parameters: z.strictObject({
    summary: z.string().describe('What you did in this turn, in a few sentences.'),
  }),
  finish: (args) => ({ tool: 'finish', summary: field(args.summary) }),
});

export const submitPlanTool = defineFinishingTool({
  name: 'submit_plan',
  description: 'Submit the implementation plan; this ends your turn.',
  parameters: z.strictObject({
    summary: z.string(),
    steps: stringList.describe('Ordered implementation steps.'),
    files: stringList.describe('Files that will be created or changed.'),
    targets: stringList
      .optional()
      .describe(
        'Existing tests the task names as having to pass: pytest node ids (tests/test_x.py::TestY::test_z), <file>::<full name> for Jest, or a test file for all its tests.',
      ),
  }),
  finish: (args) => ({
    tool: 'submit_plan',
    plan: {
      summary: field(args.summary),
      steps: list(args.steps),
      files: list(args.files),
      ...(args.targets?.length ? { targets: list(args.targets) } : {}),
    },
  }),
});

export const submitAnalysisTool = defineFinishingTool({
  name: 'submit_analysis',
  description: 'Submit your analysis of the failing tests; this ends your turn.',
  parameters: z.strictObject({
    root_cause: z.string().describe('Why the tests failed.'),
    fix_hypothesis: z.string().describe('The change that should make them pass.'),
    files_to_change: stringList,
    tests_wrong: z.boolean().describe('True when the tests themselves are wrong, not the code.'),
  }),
  finish: (args) => ({
    tool: 'submit_analysis',
    analysis: {
      rootCause: field(args.root_cause),
      fixHypothesis: field(args.fix_hypothesis),
      filesToChange: list(args.files_to_change),
      testsWrong: args.tests_wrong,
    },
  }),
});
