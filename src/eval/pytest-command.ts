/**
 * An instance's `test_cmd` read as what it asks of pytest, so that its tests can be judged by aca's
 * verdict process instead of by the command: `[PYTHONPATH=a:b] [/usr/bin/]python3 -m pytest
 * [options] files…` or `pytest …`. Null for any other command line, and for one with shell syntax
 * (quotes, `;`, `|`, `$`, redirections) or options that choose which tests run (`-k`, `--deselect`):
 * those are run as written.
 */
export interface PytestCommand {
  /** Test files (node ids reduced to their file), repository-relative. */
  files: string[];
  /** Folders of `PYTHONPATH`, repository-relative. */
  importPaths: string[];
}

const ENV_ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(\S*)$/;
const PYTHON = /^(\/usr\/bin\/|\/usr\/local\/bin\/)?python3?(\.\d+)?$/;
const SHELL_SYNTAX = /["'`$;|&<>(){}\\*?[\]~!#]/;
/** Options that change only how pytest reports, not which tests run. */
const HARMLESS =
  /^(-q|-v+|-s|-x|-l|-rA|-r[a-zA-Z]+|--tb=\w+|--color=\w+|--no-header|--disable-warnings|-W\S*|--strict-markers|--durations=\d+)$/;

export function readPytestCommand(line: string): PytestCommand | null {
  if (SHELL_SYNTAX.test(line)) return null;
  const words = line.trim().split(/\s+/);
  const importPaths: string[] = [];
  let at = 0;
  for (; at < words.length; at++) {
    const assignment = ENV_ASSIGNMENT.exec(words[at]!);
    if (!assignment) break;
    if (assignment[1] !== 'PYTHONPATH') return null;
    for (const folder of assignment[2]!.split(':').filter(Boolean)) {
      if (!isRelativeInside(folder)) return null;
      importPaths.push(folder.replace(/\/+$/, ''));
    }
  }
  if (words[at] === 'pytest' || words[at] === 'py.test') at += 1;
  else if (PYTHON.test(words[at] ?? '') && words[at + 1] === '-m' && words[at + 2] === 'pytest') at += 3;
  else return null;
  const files: string[] = [];
  for (; at < words.length; at++) {
    const word = words[at]!;
    if (word === '-p') {
      // Only switching a plugin off: `-p no:cacheprovider`.
      if (!words[at + 1]?.startsWith('no:')) return null;
      at += 1;
    } else if (word.startsWith('-')) {
      if (!HARMLESS.test(word)) return null;
    } else {
      const file = word.split('::')[0]!;
      if (!isRelativeInside(file) || !file.endsWith('.py')) return null;
      if (!files.includes(file)) files.push(file);
    }
  }
  return files.length > 0 ? { files, importPaths } : null;
}

function isRelativeInside(file: string): boolean {
  if (file === '' || file.startsWith('/')) return false;
  return !file.split('/').some((part) => part === '..');
}
