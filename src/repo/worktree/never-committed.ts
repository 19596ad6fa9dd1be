/**
 * What a run never commits, whatever the repository's `.gitignore` says: caches that the code
 * under test writes and that a later import or test run of the user's would execute or trust.
 * A hash-based unchecked `.pyc` is loaded by Python without looking at its `.py`, so a cache
 * written by a test could run hidden code on the user's machine once applied, while the diff
 * showed only "Binary files differ". None of them is source, so leaving them out costs nothing.
 *
 * Matched without regard to case: on a case-insensitive file system (macOS, Windows)
 * `__PYCACHE__/m.PYC` is the cache Python reads.
 */
export const NEVER_COMMITTED_PATTERNS: readonly string[] = [
  // Python bytecode (and Jython's).
  '**/__pycache__/**',
  '**/*.pyc',
  '**/*.pyo',
  '**/*$py.class',
  // Test runners' and type checkers' caches.
  '**/.pytest_cache/**',
  '**/.hypothesis/**',
  '**/.mypy_cache/**',
  '**/.ruff_cache/**',
  '**/.jest-cache/**',
  '**/.jest_cache/**',
  '**/.jestcache/**',
  '**/node_modules/.cache/**',
];

/** The patterns as exclude pathspecs for `git add` and `git ls-files`. */
export const NEVER_COMMITTED_PATHSPECS: readonly string[] = NEVER_COMMITTED_PATTERNS.map(
  (pattern) => `:(exclude,glob,icase)${pattern}`,
);
