# How the pytest verdict's audit hook watches a test's call phase: a profile function (or, for the
# repository's own tests, a trace function) that hands returns of the acceptance tests' code to the
# hook, and the judgement of such a return (`on_return`): the test body returned, in a frame whose
# globals are its module's own dict, whose imported names still refer to what their modules hold
# and whose other names are the real builtins. Its text goes before pytest_verdict.py's in the
# verdict process's `-c` argument (runners/pytest-runner.ts); `_aca_watch` is called once, from the
# hook's install, and what it returns follows the hook's rule (every builtin it uses bound here).
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.


def _aca_watch(types, dis, sys_modules, trusted, code, values, names, judge, process):
    """
    `code`: what _aca_code returned; `values`: (judged_value, judged_name) of _aca_values; `names`:
    what _aca_names returned; `judge`: (state, calling, own, doubt, doubt_value) of the hook;
    `process`: (audit, get_ident, settrace, setprofile). Returns (on_return, profile,
    local_repository, trace_repository, own_profile).
    """
    _type = type
    _id = id
    _str = str
    _frozenset = frozenset
    frame_type = types.FrameType
    module_type = types.ModuleType
    module_dict = module_type.__dict__["__dict__"].__get__
    entry_of, _, genuine, helper_names, helper_namespaces = code
    judged_value, judged_name = values
    lookup, bindings_hold, builtins_hold = names
    state, calling, own, doubt, doubt_value = judge
    audit, get_ident, settrace, setprofile = process
    returning = _frozenset(dis.opmap[n] for n in ("RETURN_VALUE", "RETURN_CONST") if n in dis.opmap)
    suspending = _frozenset(dis.opmap[n] for n in ("YIELD_VALUE",) if n in dis.opmap)

    def on_return(frame, value):
        if _type(frame) is not frame_type:
            return
        code = frame.f_code
        entry = entry_of(code)
        current = state["test"]
        if current is None:
            return
        if entry is None:
            back = frame.f_back
            if back is not None and entry_of(back.f_code) is not None:
                why = judged_value(value, code)
                if why is not None:
                    doubt_value(why)
            return
        rel, name, names, co_code, is_module, namespace = entry
        # A test class may inherit its tests from a class of another trusted test file.
        if is_module or name != current[1]:
            return
        seen = state["seen"]
        f_globals = frame.f_globals
        if f_globals is not namespace:
            doubt("the code of " + current[2][:200] + " ran under globals that are not its module's")
            seen["rebound"] = True
            return
        imports, checked, star = names
        if not bindings_hold(f_globals, imports):
            seen["rebound"] = True
            return
        for bound in imports:
            for module in (bound[1], bound[1] + "." + bound[2] if bound[2] is not None else None):
                if module is None or module not in helper_names:
                    continue
                found, source = lookup(sys_modules, module)
                held = module_dict(source) if found and _type(source) is module_type else None
                if held is None or helper_namespaces.get(_id(held)) is not held:
                    doubt("the test imports " + module[:80] + ", which is not the base commit's helper of that name")
                    seen["rebound"] = True
                    return
        for bound in imports:
            found, value = lookup(f_globals, bound[0])
            why = judged_name(value) if found else None
            if why is not None:
                doubt_value(why)
        why = builtins_hold(f_globals, frame.f_builtins, checked, star)
        if why is not None:
            doubt(why)
            seen["rebound"] = True
            return
        op = co_code[frame.f_lasti]
        if op in returning:
            seen["ran"] = True
        elif op not in suspending:
            seen["raised"] = True

    def profile(frame, event, arg, audit=audit, calling=calling, starts=_str.startswith, own=trusted + ("<frozen ",)):
        # Returns go to the hook, and calls of code that is not the interpreter's or pytest's (the
        # hook would let those pass at once); the built-in function being called is only noted, for
        # the hook to know which one runs a function of the code under test (len runs __len__).
        if event == "return":
            audit("aca.ret", frame, arg)
        elif event == "call":
            if not starts(frame.f_code.co_filename, own):
                audit("aca.call", frame)
        elif event == "c_call":
            calling[0] = arg
        elif event == "c_return" or event == "c_exception":
            calling[0] = None

    # For the repository's own tests, which the value checks leave be, a trace function rather than
    # the profile: the interpreter calls it once per Python call (not per return or built-in call),
    # and it follows only frames of trusted test code, whose returns go to the hook. A suite calling
    # its package a million times a test pays several times its own time under the profile.
    def local_repository(frame, event, arg, audit=audit):
        if event == "return":
            audit("aca.ret", frame, arg)
        return local_repository

    def trace_repository(frame, event, arg, genuine=genuine, _id=_id, follow=local_repository):
        if event == "call" and _id(frame.f_code) in genuine:
            return follow
        return None

    def own_profile(fn, trace=False):
        own[0] = get_ident()
        try:
            (settrace if trace else setprofile)(fn)
        finally:
            own[0] = None

    return on_return, profile, local_repository, trace_repository, own_profile
