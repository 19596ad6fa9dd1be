# Which paths the pytest verdict's audit hook guards: the process's own descriptors, memory and
# environment under /proc, however spelled. Its text goes before pytest_verdict.py's in the verdict
# process's `-c` argument (runners/pytest-runner.ts); `_aca_proc_target` is called once, from the
# hook's install, and what it returns follows the hook's rule (every builtin it uses bound here).
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_proc_target(getcwd):
    _type = type
    _str = str
    _bytes = bytes
    _len = len
    _exception = Exception

    def proc_target(path):
        # The process's own descriptors, memory and environment, by any spelling of /proc.
        if _type(path) is _bytes:
            try:
                path = path.decode("utf-8", "replace")
            except _exception:
                return True
        if _type(path) is not _str:
            return False
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        parts = []
        for part in path.split("/"):
            if part == "" or part == ".":
                continue
            if part == "..":
                if parts:
                    parts.pop()
                continue
            parts.append(part)
        if _len(parts) < 2 or parts[0] != "proc":
            return False
        who = parts[1]
        if who not in ("self", "thread-self") and not who.isdigit():
            return False
        rest = parts[2:]
        if rest and rest[0] == "task":
            rest = rest[2:]
        return not rest or rest[0] in ("fd", "fdinfo", "mem", "environ", "map_files", "task")

    return proc_target
