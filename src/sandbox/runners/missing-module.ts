/**
 * A test command that names a Python module to run (`python3 -m no_such_runner`) and a Python that
 * says it has no such module: no test ran, so nothing failed. Only the interpreter's own line counts
 * (`<python>: No module named X`, or its "Error while finding module specification" form, which it
 * prints before running anything), and only for the module the command names or a package it lies
 * in: a test that imports a missing module prints a traceback instead, and stays a failing test.
 */
const MODULE_OPTION = /(?:^|[\s;&|(/])python[\d.]*(?:\s+-[A-Za-z]+)*\s+-m\s*([A-Za-z_][\w.]*)/g;
const INTERPRETER_LINE =
  /^\S*python[\d.]*: (?:No module named ([\w.]+)|Error while finding module specification for '([\w.]+)' \(ModuleNotFoundError: No module named '([\w.]+)'\))\s*$/gm;

/** The modules a command line runs with `python -m`. */
export function modulesRunBy(commandLine: string): string[] {
  return [...commandLine.matchAll(MODULE_OPTION)].map((m) => m[1]!);
}

/** The module of `commandLine` that Python could not find, by what it printed; null when none. */
export function missingRunModule(commandLine: string, output: string): string | null {
  const named = modulesRunBy(commandLine);
  if (named.length === 0) return null;
  for (const line of output.matchAll(INTERPRETER_LINE)) {
    const missing = line[1] ?? line[3]!;
    const wanted = line[1] ?? line[2]!;
    const found = named.find(
      (module) => module === wanted && (module === missing || module.startsWith(`${missing}.`)),
    );
    if (found) return found;
  }
  return null;
}
