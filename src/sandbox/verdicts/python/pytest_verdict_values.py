# The pytest verdict's hold on the values and names an acceptance test works with. Its text is put
# before pytest_verdict.py's in the verdict process's `-c` argument (runners/pytest-runner.ts), and
# `_aca_values` is called once, from the audit hook's install, before anything of the workspace
# runs. What it returns follows the hook's rule: it never runs code of the workspace's (every
# builtin it uses is bound here, names are compared as exact strings, types by identity).
#
# - A comparison or truth test in the acceptance tests' code (`==`, `<`, `in`, `not`, an `assert`
#   or `if`), directly or through the interpreter's, pytest's or a data class's own code, that runs
#   a function of the code under test (its `__eq__`, `__hash__`, `__lt__`, `__bool__`, ...) is
#   tampering: the assertion would be judged by the code it judges.
# - A value handed to the acceptance tests' code whose class (or a container's item's) compares or
#   hashes through something other than a function or a built-in type's own slot (`__eq__ = bool`,
#   a `partialmethod`) is tampering too: that answers without a frame the first check could see.
# - Functions that `dataclasses` generates are the data class's fields compared, and count as the
#   interpreter's own when their code is exactly what this interpreter's dataclasses writes for
#   those fields and the names it reads are the real builtins.
# - Code that names itself after the interpreter's files (compiled, built or unmarshalled under such
#   a file name by the code under test) is tampering, as "the interpreter's own" is told by file name.
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_values(trusted, entry_of, getframe, builtins_now, dis, dataclasses, keyword, operator):
    _type = type
    _str = str
    _len = len
    _id = id
    _tuple = tuple
    _list = list
    _dict = dict
    _set = set
    _frozenset = frozenset
    _bytes = bytes
    _compile = compile
    _none = None
    _exception = Exception
    _any = any
    _all = all
    _hasattr = hasattr
    _int = int
    function_type = _type(_aca_values)
    code_type = _type(_aca_values.__code__)
    mappingproxy_items = _type(_type.__dict__).items
    type_mro = _type.__dict__["__mro__"].__get__
    type_flags = _type.__dict__["__flags__"].__get__
    type_dict = _type.__dict__["__dict__"].__get__
    type_name = _type.__dict__["__qualname__"].__get__
    function_code = function_type.__dict__["__code__"].__get__
    dict_items = _dict.items
    list_iter = _list.__iter__
    tuple_iter = _tuple.__iter__
    set_iter = _set.__iter__
    frozenset_iter = _frozenset.__iter__
    is_identifier = _str.isidentifier
    keywords = _frozenset(keyword.kwlist)
    starts = _str.startswith
    heap = 1 << 9
    # A built-in type's own slot (`__hash__ = object.__hash__`), under its own name only: `__eq__ =
    # str.__ne__` would answer the opposite.
    slot_types = (_type(object.__hash__), _type(_str.join))
    slot_names = (slot_types[0].__dict__["__name__"].__get__, slot_types[1].__dict__["__name__"].__get__)
    type_module = _type.__dict__["__module__"].__get__
    # Values of the interpreter's and pytest's own that equal what they are asked to: the code under
    # test may not hand them to the tests (the tests' own `pytest.approx` is theirs to use).
    wildcards = _frozenset([("unittest.mock", "_ANY"), ("unittest.mock", "NonCallableMock"),
                            ("_pytest.python_api", "ApproxBase")])
    plain = _frozenset([_id(t) for t in (int, float, complex, bool, _str, _bytes, _type(None), _type(Ellipsis))])
    containers = {_id(_list): list_iter, _id(_tuple): tuple_iter, _id(_set): set_iter, _id(_frozenset): frozenset_iter}
    real_builtins = builtins_now
    chain_trusted = trusted + ("<frozen ",)

    compared_ops = _frozenset(
        code for name, code in dis.opmap.items()
        if name in ("COMPARE_OP", "CONTAINS_OP", "UNARY_NOT", "TO_BOOL", "COMPARE_AND_BRANCH")
        or "IF_FALSE" in name or "IF_TRUE" in name
    )
    judging = [len, isinstance, issubclass, hash, bool, abs, operator.eq, operator.ne, operator.lt,
               operator.le, operator.gt, operator.ge, operator.contains, operator.truth, operator.not_,
               operator.is_, operator.is_not, operator.length_hint]
    compared_names = _frozenset([
        "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__len__",
        "__contains__",
    ])
    generator_flags = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator

    # ---- what dataclasses writes, learned from a data class made now and checked against templates
    templates = {}
    candidates = {
        "__eq__": [" def __eq__(self,other):\n  if other.__class__ is self.__class__:\n   return {s}=={o}\n  return NotImplemented\n",
                   " def __eq__(self, other):\n  if self is other:\n   return True\n  if other.__class__ is self.__class__:\n   return {s}=={o}\n  return NotImplemented\n"],
        "__hash__": [" def __hash__(self):\n  return hash({s})\n"],
    }
    for op_name, op in (("__lt__", "<"), ("__le__", "<="), ("__gt__", ">"), ("__ge__", ">=")):
        candidates[op_name] = [" def " + op_name + "(self,other):\n  if other.__class__ is self.__class__:\n   return {s}" + op + "{o}\n  return NotImplemented\n",
                               " def " + op_name + "(self, other):\n  if other.__class__ is self.__class__:\n   return {s}" + op + "{o}\n  return NotImplemented\n"]

    def tuple_text(owner, fields):
        if not fields:
            return "()"
        return "(" + ",".join([owner + "." + f for f in fields]) + ",)"

    def generated_code(template, fields):
        text = "def __aca_generated__():\n" + template.replace("{s}", tuple_text("self", fields)).replace(
            "{o}", tuple_text("other", fields))
        try:
            outer = _compile(text, "<aca>", "exec", dont_inherit=True)
        except _exception:
            return None
        for const in outer.co_consts:
            if _type(const) is code_type:
                for inner in const.co_consts:
                    if _type(inner) is code_type:
                        return inner
        return None

    def same_code(a, b):
        return (a.co_code == b.co_code and a.co_names == b.co_names and a.co_varnames == b.co_varnames
                and a.co_argcount == b.co_argcount and a.co_freevars == b.co_freevars
                and plain_consts(a.co_consts) and a.co_consts == b.co_consts)

    def plain_consts(consts):
        for c in consts:
            if _id(_type(c)) not in plain and c is not _none:
                return False
        return True

    try:
        reference = dataclasses.dataclass(frozen=True, order=True)(
            _type("AcaReference", (), {"__annotations__": {"aca_a": int, "aca_b": int}}))
        for name, texts in candidates.items():
            made = type_dict(reference).get(name)
            if _type(made) is not function_type:
                continue
            for template in texts:
                code = generated_code(template, ["aca_a", "aca_b"])
                if code is not None and same_code(code, function_code(made)):
                    templates[name] = template
                    break
    except _exception:
        pass

    verified = {}  # id(code) -> (code, bool)

    def resolves_to_builtin(f_globals, f_builtins, name):
        # A frame's globals and builtins give `name` its real builtin, and nothing else.
        if _type(f_globals) is not _dict or _type(f_builtins) is not _dict or name not in real_builtins:
            return False
        for space in (f_globals, f_builtins):
            for k, v in dict_items(space):
                if _type(k) is not _str:
                    return False
                if k == name:
                    return v is real_builtins[name]
        return False

    def dataclass_generated(code):
        known = verified.get(_id(code))
        if known is not None and known[0] is code:
            return known[1]
        ok = False
        name = code.co_name
        template = templates.get(name) if _type(name) is _str else None
        names = code.co_names
        if template is not None and _type(names) is _tuple and names:
            fields = names[1:] if name == "__hash__" else names[1:-1]
            if _all(_type(f) is _str and is_identifier(f) and f not in keywords for f in fields):
                expected = generated_code(template, _list(fields))
                ok = expected is not None and same_code(code, expected)
        verified[_id(code)] = (code, ok)
        return ok

    def generated_frame(frame):
        # A frame running a data class's generated comparison, whose globals leave the one name
        # it reads (NotImplemented, or hash) to the real builtin.
        code = frame.f_code
        if not dataclass_generated(code):
            return False
        return resolves_to_builtin(frame.f_globals, frame.f_builtins,
                                   "hash" if code.co_name == "__hash__" else "NotImplemented")

    def trusted_code(code):
        # The interpreter's own code (its folders, site-packages, its frozen modules) and pytest's.
        filename = code.co_filename
        return _type(filename) is _str and starts(filename, chain_trusted)

    def frame_trusted(frame):
        # A frame the chain from a comparison may pass through: the interpreter's, pytest's, or a
        # data class's generated comparison.
        code = frame.f_code
        filename = code.co_filename
        if _type(filename) is not _str:
            return False
        if starts(filename, chain_trusted):
            return True
        return generated_frame(frame)

    def judged_call(frame, calling):
        """
        A Python function starting: None, or why it is tampering. It is when a comparison or truth
        test of the acceptance tests' code runs it, directly or through trusted frames only, and it
        is the code under test's. `calling` is the built-in function being called when it started,
        if any: one that judges its argument (len, isinstance, hash, operator.eq) counts as a
        comparison.
        """
        code = frame.f_code
        if trusted_code(code) or entry_of(code) is not None:
            return None
        flags = code.co_flags
        if _type(flags) is _int and flags & generator_flags:
            return None
        caller = frame.f_back
        compared = calling is not None and _any(calling is judge for judge in judging)
        depth = 0
        while caller is not None and depth < 64:
            c = caller.f_code
            lasti = caller.f_lasti
            co_code = c.co_code
            if 0 <= lasti < _len(co_code) and co_code[lasti] in compared_ops:
                compared = True
            if entry_of(c) is not None:
                break
            if not frame_trusted(caller):
                return None
            caller = caller.f_back
            depth += 1
        else:
            return None
        if not compared:
            return None
        if generated_frame(frame):
            return None
        name = code.co_qualname if _hasattr(code, "co_qualname") else code.co_name
        return ("a comparison in the acceptance tests ran the code under test's "
                + (name if _type(name) is _str else "?")[:80])

    checked_types = {}  # id(type) -> (type, verdict)
    checked_wildcards = {}  # id(type) -> (type, name or None)

    def type_verdict(t):
        known = checked_types.get(_id(t))
        if known is not None and known[0] is t:
            return known[1]
        verdict = None
        for klass in type_mro(t):
            if not type_flags(klass) & heap:
                continue
            for key, value in mappingproxy_items(type_dict(klass)):
                if _type(key) is not _str:
                    verdict = "a class whose attribute names are not all strings"
                    break
                if key not in compared_names or value is _none:
                    continue
                kind = _type(value)
                if kind is function_type:
                    continue
                if kind is slot_types[0] and slot_names[0](value) == key:
                    continue
                if kind is slot_types[1] and slot_names[1](value) == key:
                    continue
                verdict = (type_name(klass) + "." + key + " is a " + type_name(kind)
                           + ", not a function: a comparison it answers runs no code the verdict can see")
                break
            if verdict is not None:
                break
        checked_types[_id(t)] = (t, verdict)
        return verdict

    def wildcard(t):
        known = checked_wildcards.get(_id(t))
        if known is not None and known[0] is t:
            return known[1]
        found = None
        for klass in type_mro(t):
            module = type_module(klass)
            name = type_name(klass)
            if _type(module) is _str and _type(name) is _str and (module, name) in wildcards:
                found = module + "." + name
                break
        checked_wildcards[_id(t)] = (t, found)
        return found

    def judged_value(value, producer=None):
        """
        A value handed to the acceptance tests' code, by the code whose code object is `producer`
        (None: a name the tests import): None, or why it cannot be trusted.
        """
        strict = producer is None or not trusted_code(producer)
        stack = [value]
        budget = 10000
        while stack and budget > 0:
            budget -= 1
            v = stack.pop()
            t = _type(v)
            if _id(t) in plain:
                continue
            iterate = containers.get(_id(t))
            if iterate is None and t is not _dict:
                found = wildcard(t)
                if found is not None:
                    if strict:
                        return "a value under test is a " + found + ", which equals what it is asked to"
                    continue  # the tests' own mock or approx, made by the library's code
                verdict = type_verdict(t)
                if verdict is not None:
                    return "a value under test: " + verdict
                for base in type_mro(t):
                    if base is _dict:
                        iterate = dict_items
                        break
                    iterate = containers.get(_id(base))
                    if iterate is not None:
                        break
                if iterate is None:
                    continue
            if t is _dict or iterate is dict_items:
                for k, item in dict_items(v):
                    stack.append(k)
                    stack.append(item)
            else:
                for item in iterate(v):
                    stack.append(item)
        return None

    def judged_name(value):
        # A name the test file imports: a class is judged as the values it makes would be (one
        # made by a built-in constructor, such as a subclass of complex, reaches the test through
        # no function's return), anything else as a value.
        try:
            type_flags(value)
        except _exception:
            return judged_value(value)
        if wildcard(value) is not None:
            return None  # a mock class: what its instances answer is the tests' to configure
        verdict = type_verdict(value)
        return None if verdict is None else "a class the tests import: " + verdict

    def forget_types():
        checked_types.clear()
        checked_wildcards.clear()

    def names_itself_trusted(filename):
        # Code compiled or built under the interpreter's own file names (or, for None, any code
        # unmarshalled) by code that is not the interpreter's. Frame 1 is the audit hook's.
        if filename is None:
            caller = getframe(2)
            return caller is None or not starts(caller.f_code.co_filename, chain_trusted)
        if _type(filename) is _bytes:
            try:
                filename = filename.decode("utf-8", "replace")
            except _exception:
                return True
        if _type(filename) is not _str or not starts(filename, chain_trusted):
            return False
        caller = getframe(2)
        return caller is None or not starts(caller.f_code.co_filename, chain_trusted)

    return judged_call, judged_value, judged_name, forget_types, names_itself_trusted, type_verdict
