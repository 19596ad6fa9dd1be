# Which code the pytest verdict's audit hook takes for the acceptance tests' own. Its text goes
# before pytest_verdict.py's in the verdict process's `-c` argument (runners/pytest-runner.ts).
# `_aca_code` runs once, from the hook's install, before anything of the workspace runs: it reads
# and compiles the read-only originals then. What it returns runs inside the hook and follows its
# rule: it never runs code of the workspace's (every builtin it uses is bound here, code compared
# by identity and equality of what the interpreter made, types by identity).
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_code(setup, os, ast, dis, types, rewrite_asserts, getframe, loader_codes, frames_removed, lookup):
    """
    Returns (entry_of, learn, genuine, helper_names, helper_namespaces): `learn` is told of every
    module code the interpreter executes and keeps those that are an acceptance file's (or a base
    helper's) as executed by a loader; `entry_of` says which acceptance code a code object is.
    """
    _type = type
    _id = id
    _str = str
    _int = int
    _bool = bool
    _tuple = tuple
    _frozenset = frozenset
    _bytes = bytes
    _dict = dict
    _none = type(None)
    _float = float
    _complex = complex
    _ellipsis = Ellipsis
    _any = any
    _len = len
    code_type = types.CodeType
    module_type = types.ModuleType
    module_dict = module_type.__dict__["__dict__"].__get__

    # What each acceptance file compiles to, from the read-only original, plainly and with pytest's
    # assertion rewriting as it stands before anything of the workspace runs. A module the
    # interpreter executes is the acceptance file only if its code equals one of these.
    def safe_const(value, depth=0):
        # Identity tests only: comparing a type of the code under test could run its metaclass.
        t = _type(value)
        if t is _str or t is _bytes or t is _int or t is _float or t is _complex or t is _bool:
            return True
        if t is _none or value is _ellipsis:
            return True
        if depth > 20:
            return False
        if t is code_type:
            value = value.co_consts
        elif t is not _tuple and t is not _frozenset:
            return False
        for item in value:
            if not safe_const(item, depth + 1):
                return False
        return True

    def functions_in(code, into):
        for const in code.co_consts:
            if _type(const) is code_type:
                into.append(const)
                functions_in(const, into)

    modules = []  # (rel, full, [module code objects], imports)
    # Each file as [relative path, path in the workspace, path of its original].
    # "modules": trusted test files not run here whose classes the run's tests may inherit from.
    for rel, full, original in setup["tests"] + setup.get("support", []) + setup.get("modules", []):
        try:
            with open(original, "rb") as f:
                source = f.read()
            tree = ast.parse(source, filename=full)
        except Exception:
            continue
        compiled = []
        try:
            compiled.append(compile(source, full, "exec", dont_inherit=True))
        except Exception:
            pass
        if rewrite_asserts is not None:
            try:
                rewritten = ast.parse(source, filename=full)
                rewrite_asserts(rewritten, source, full, None)
                compiled.append(compile(rewritten, full, "exec", dont_inherit=True))
            except Exception:
                pass
        modules.append((rel, full, compiled, _aca_read_names(ast, dis, tree, compiled, functions_in)))

    # The base commit's helpers (see _source_only): what each compiles to, and the names a base test
    # imports one by. A module of such a name that the test reads from must be the one the
    # interpreter made by executing that code: a module of the code under test's making, put into
    # sys.modules under the helper's name before the test imports it, is not.
    helper_codes = {}
    for rel, full, original in setup.get("helpers", []):
        try:
            with open(original, "rb") as f:
                helper_codes[full] = compile(f.read(), full, "exec", dont_inherit=True)
        except Exception:
            pass
    helper_names = _helper_module_names(os, setup)
    helper_namespaces = {}

    # Code objects the interpreter really executed as an acceptance module, by identity: id -> entry.
    genuine = {}
    kept = []

    def entry_of(code):
        return genuine.get(_id(code))

    def loader_namespace(code):
        # The dict a module's code is executed in, read from the frame of the loader that called
        # exec (frames 0 to 2 are this function's, learn's and the hook's): pytest's rewriting
        # loader or importlib's.
        # None when anything else executes it.
        caller = getframe(3)
        if caller is None:
            return None
        c = caller.f_code
        local = caller.f_locals
        if _type(local) is not _dict:
            return None
        if _any(c is known for known in loader_codes):
            found, module = lookup(local, "module")
            namespace = module_dict(module) if found and _type(module) is module_type else None
        elif c is frames_removed and frames_removed is not None:
            found, args = lookup(local, "args")
            if not found or _type(args) is not _tuple or _len(args) < 2 or args[0] is not code:
                return None
            namespace = args[1]
        else:
            return None
        return namespace if _type(namespace) is _dict else None

    def learn(code):
        # A module the interpreter executes: an acceptance file's when it equals its compiled
        # original and a loader executes it, in the dict its frames will then have as globals.
        filename = code.co_filename
        if _type(filename) is not _str:
            return
        expected = helper_codes.get(filename)
        if expected is not None:
            if code.co_code == expected.co_code and safe_const(code) and code == expected:
                namespace = loader_namespace(code)
                if namespace is not None:
                    kept.append(namespace)
                    helper_namespaces[_id(namespace)] = namespace
            return
        for rel, full, compiled, names in modules:
            if filename != full:
                continue
            for expected in compiled:
                if code.co_code != expected.co_code or not safe_const(code):
                    continue
                if code != expected:
                    continue
                namespace = loader_namespace(code)
                if namespace is None:
                    return
                found = [code]
                functions_in(code, found)
                kept.append(namespace)
                for c in found:
                    kept.append(c)
                    genuine[_id(c)] = (rel, c.co_name, names, c.co_code, c is code, namespace)
                return

    return entry_of, learn, genuine, helper_names, helper_namespaces
