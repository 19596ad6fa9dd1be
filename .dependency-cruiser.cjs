/**
 * Which parts of aca may import which, checked by `npm run lint` (depcruise src bench). Rules name
 * folders, not files, so they hold however a folder is split inside.
 *
 * The layers, bottom up: src/shared (imports nothing of aca's); src/config.ts (the one reader of
 * the environment); the parts that do one job each (sandbox, repo, memory, store, llm, tools,
 * mcp, repo-map, temporal, eval, agents, preflight); activities and the worker that wire them up;
 * the workflows, which see activities only as types; api; cli on top, which nothing imports.
 * bench/ sits beside cli and imports the product, never the other way round.
 *
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle makes a module see a half-loaded partner at startup and ties the parts together. ' +
        'Cycles through type-only imports are left out: they are erased when compiled.',
      from: { path: '^(src|bench)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-circular-in-sandbox-or-process',
      severity: 'error',
      comment:
        'The security boundary has no cycles at all, through types neither: a type both sides use ' +
        'lives in the file both import.',
      from: { path: '^src/(sandbox|process)/' },
      to: { circular: true },
    },
    {
      name: 'shared-imports-only-shared',
      severity: 'error',
      comment: 'src/shared is what every part may use, so it uses no part of aca itself.',
      from: { path: '^src/shared/' },
      to: { path: '^(src|bench|test)/', pathNot: '^src/shared/' },
    },
    {
      name: 'sandbox-and-repo-import-only-shared',
      severity: 'error',
      comment:
        'The sandbox and the git layer are the security boundary: they stay small and self-contained, ' +
        'using src/shared, src/process (the spawn helper) and config.ts (the search path for host programs) ' +
        'and nothing else of aca.',
      from: { path: '^src/(sandbox|repo)/' },
      to: {
        path: '^(src|bench|test)/',
        pathNot: ['^src/$1/', '^src/shared/', '^src/process/', '^src/config\\.ts$'],
      },
    },
    {
      name: 'process-imports-only-shared',
      severity: 'error',
      comment:
        'Starting processes (the spawn helper) is a concern of its own, used by the sandbox and the git ' +
        'layer: it builds on src/shared alone.',
      from: { path: '^src/process/' },
      to: { path: '^(src|bench|test)/', pathNot: ['^src/process/', '^src/shared/'] },
    },
    {
      name: 'middle-layers-import-no-upper-layer',
      severity: 'error',
      comment:
        'The parts that do one job each are used by activities, workflows, api and cli, never the ' +
        'other way round: a part that reached up would pull the wiring (Temporal, the client, the ' +
        'command line) into every user of it and tie the layers into a knot. Type-only imports count.',
      from: {
        path: '^src/(agents|tools|sandbox|repo|memory|store|eval|llm|repo-map|mcp|temporal|preflight)/',
      },
      to: { path: '^src/(activities|workflows|api|cli)/' },
    },
    {
      name: 'nothing-imports-cli',
      severity: 'error',
      comment: 'The CLI is a client of src/api; library users and the worker must not pull it in.',
      from: { path: '^(src|bench)/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'src-never-imports-bench-or-test',
      severity: 'error',
      comment: 'bench/ and test/ are not shipped.',
      from: { path: '^src/' },
      to: { path: '^(bench|test)/' },
    },
    {
      name: 'workflows-see-activities-as-types',
      severity: 'error',
      comment:
        'Workflow code is replayed in a sandboxed isolate: it runs its own folder and src/shared, and ' +
        'knows activities only by their types (the worker runs them).',
      from: { path: '^src/workflows/' },
      to: { path: '^src/', pathNot: ['^src/workflows/', '^src/shared/', '^src/activities/'] },
    },
    {
      name: 'workflows-import-no-activity-code',
      severity: 'error',
      comment: 'A value import of an activity module would bundle its code (and Node) into the workflow.',
      from: { path: '^src/workflows/' },
      to: { path: '^src/activities/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'workflows-use-only-temporal-packages',
      severity: 'error',
      comment:
        'zod, openai, pg and the like belong in activities (eslint bans Node built-ins here by name; ' +
        'this lists what is allowed instead).',
      from: { path: '^src/workflows/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
        pathNot: 'node_modules/@temporalio/(workflow|common)/',
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
