import { UserInputError } from '../../shared/errors';
import type { Language } from '../../shared/types';
import { git, type GitTarget } from '../git/git';

/** What marks each language's projects among a commit's paths. */
const MARKS: Record<Language, { files: RegExp; manifests: RegExp }> = {
  python: { files: /\.py$/, manifests: /^(pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt)$/ },
  typescript: { files: /\.(ts|tsx|mts|cts)$/, manifests: /^tsconfig[^/]*\.json$/ },
  javascript: { files: /\.(js|jsx|mjs|cjs)$/, manifests: /^package\.json$/ },
};

/** Folders that hold others' code, not the project's. */
const VENDORED = /(^|\/)(node_modules|\.venv|venv|vendor|dist|build|__pycache__)\//;

/** How many of the commit's own files each language has, by extension, with its manifests at the top. */
export async function languageEvidence(
  target: GitTarget,
  commit: string,
): Promise<Record<Language, { files: number; manifest: boolean }>> {
  const listing = await git(target, ['ls-tree', '-r', '-z', '--name-only', commit]);
  const paths = listing.split('\0').filter((p) => p && !VENDORED.test(p));
  const evidence = {} as Record<Language, { files: number; manifest: boolean }>;
  for (const language of Object.keys(MARKS) as Language[]) {
    const { files, manifests } = MARKS[language];
    evidence[language] = {
      files: paths.filter((p) => files.test(p) && !p.endsWith('.d.ts')).length,
      manifest: paths.some((p) => manifests.test(p)),
    };
  }
  return evidence;
}

/**
 * The run's language for a repository: the one asked for, unless the repository has code in
 * other languages and none in it (bad input, before any model call); without one, the language
 * most of its files are in (TypeScript ahead of JavaScript when a project has a tsconfig).
 */
export async function repositoryLanguage(
  target: GitTarget,
  commit: string,
  asked: Language | undefined,
  where: string,
): Promise<Language> {
  const evidence = await languageEvidence(target, commit);
  const has = (language: Language) => evidence[language].files > 0;
  if (asked !== undefined) {
    const found = (Object.keys(evidence) as Language[]).filter(has);
    // A repository with no code of any of these languages (a test command of its own) takes any.
    if (!has(asked) && found.length > 0) {
      throw new UserInputError(
        `--language ${asked} does not fit the repository at ${where}: it has no ${asked} files, but ${found.join(' and ')} files (--language ${detected(evidence) ?? found[0]!}, or leave --language out to detect it)`,
      );
    }
    return asked;
  }
  return detected(evidence) ?? 'python';
}

function detected(evidence: Record<Language, { files: number; manifest: boolean }>): Language | null {
  const ts = evidence.typescript;
  if (ts.files > 0 && (ts.manifest || ts.files >= evidence.javascript.files)) {
    if (ts.files >= evidence.python.files || ts.manifest) return 'typescript';
  }
  const ranked = (Object.keys(evidence) as Language[])
    .filter((l) => evidence[l].files > 0)
    .sort((a, b) => evidence[b].files - evidence[a].files);
  return ranked[0] ?? null;
}
