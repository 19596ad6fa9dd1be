# The names an acceptance test reads, for the pytest verdict's audit hook. Its text goes before
# pytest_verdict.py's in the verdict process's `-c` argument (runners/pytest-runner.ts).
# `_aca_read_names` runs while the hook is installed, on the read-only originals; what `_aca_names`
# returns runs inside the hook and follows its rule: it never runs code of the workspace's (names
# are compared as exact strings, values by identity, every builtin it uses bound at install).
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_read_names(ast, dis, tree, compiled, functions_in):
    """
    What a test file's names must hold: (imports, checked, star). `imports` are the module-level
    imports, as (name, module, attribute or None); `checked` the names its code reads (global
    loads) that the file neither defines nor imports anywhere, which can only be builtins or the
    names pytest's assertion rewriting adds; `star` whether a star import leaves that open.
    """
    imports = []
    defined = set()
    star = False
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name and type(node.ctx) is not ast.Load:
            defined.add(node.id)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            defined.add(node.name)
        elif kind is ast.alias:
            if node.name == "*":
                star = True
            defined.add(node.asname or node.name.split(".")[0])
        elif kind is ast.Global or kind is ast.Nonlocal:
            defined.update(node.names)
        elif type(getattr(node, "name", None)) is str:
            defined.add(node.name)  # except ... as name, match captures
        elif type(getattr(node, "rest", None)) is str:
            defined.add(node.rest)
    for node in tree.body:
        if type(node) is ast.ImportFrom and node.level == 0 and node.module:
            for alias in node.names:
                if alias.name != "*":
                    imports.append((alias.asname or alias.name, node.module, alias.name))
        elif type(node) is ast.Import:
            for alias in node.names:
                if alias.asname:
                    imports.append((alias.asname, alias.name, None))
                else:
                    top = alias.name.split(".")[0]
                    imports.append((top, top, None))
    reads = set()
    for module_code in compiled:
        found = []
        functions_in(module_code, found)
        for c in [module_code] + found:
            _global_loads(dis, c, reads)
    # A module's own dunder names (__name__, __file__) are the import system's, not builtins.
    checked = frozenset(n for n in reads if n not in defined and not (n.startswith("__") and n.endswith("__")))
    return imports, checked, star


def _global_loads(dis, code, into):
    # The names a code object loads as globals, read straight from its bytecode (dis.get_instructions
    # costs more than the rest of the verdict's set-up): LOAD_GLOBAL's argument is the name's index,
    # shifted left by one from Python 3.11 on.
    import sys

    load_global = dis.opmap.get("LOAD_GLOBAL")
    load_name = dis.opmap.get("LOAD_NAME")
    extended = dis.opmap.get("EXTENDED_ARG")
    shift = 1 if sys.version_info >= (3, 11) else 0
    raw = code.co_code
    names = code.co_names
    arg = 0
    for i in range(0, len(raw) - 1, 2):
        op = raw[i]
        arg = arg | raw[i + 1]
        if op == extended:
            arg = arg << 8
            continue
        if op == load_global:
            index = arg >> shift
        elif op == load_name:
            index = arg
        else:
            index = -1
        if 0 <= index < len(names):
            into.add(names[index])
        arg = 0


def _aca_names(sys_modules, real_builtins, inserted):
    _type = type
    _str = str
    _dict = dict
    _any = any
    dict_items = _dict.items
    module_type = _type(sys_modules["sys"])
    module_dict = module_type.__dict__["__dict__"].__get__
    type_mro = _type.__dict__["__mro__"].__get__

    def lookup(mapping, key):
        # Never hashes or compares a key the mapping holds: a key object of the code under test (a
        # str subclass) could run its code here. Only exact strings are compared.
        for k, v in dict_items(mapping):
            if _type(k) is _str and k == key:
                return True, v
        return False, None

    def bindings_hold(f_globals, imports):
        for name, module, attr in imports:
            found, source = lookup(sys_modules, module)
            # A module taken out of sys.modules (or put back as something else) for the length of
            # the call leaves nothing to compare the test's names with: rebound.
            if not found or not _any(base is module_type for base in type_mro(_type(source))):
                return False
            bound, value = lookup(f_globals, name)
            if attr is None:
                if value is not source:
                    return False
                continue
            namespace = module_dict(source)
            if _type(namespace) is not _dict:
                return False
            held, expected = lookup(namespace, attr)
            if held and value is not expected:
                return False
        return True

    def builtins_hold(f_globals, f_builtins, checked, star):
        # The names the test code reads that its file neither defines nor imports: None, or which
        # one is not what it must be. One pass over each dict, exact strings only.
        if _type(f_builtins) is not _dict:
            return "the test's builtins are not a dict"
        for k, v in dict_items(f_globals):
            if _type(k) is not _str:
                return "a name in the test module's globals is not a string"
            if k not in checked:
                continue
            if k in inserted:
                if v is not inserted[k]:
                    return "the test reads " + k + ", which is not what assertion rewriting put there"
            elif k in real_builtins:
                if v is not real_builtins[k]:
                    return "the test reads " + k + ", which is not the real builtin"
            elif not star:
                return "the test reads " + k + ", which its file never defines or imports"
        for k, v in dict_items(f_builtins):
            if _type(k) is not _str:
                return "a name in the test's builtins is not a string"
            if k in checked and k in real_builtins and v is not real_builtins[k]:
                return "the test reads " + k + ", which is not the real builtin"
        return None

    return lookup, bindings_hold, builtins_hold
