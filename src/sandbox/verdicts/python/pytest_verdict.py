# The pytest verdict process (see verdicts/verdict-process.ts): `python -I -B -u -c <the text of the
# pytest_verdict_*.py files beside this one, then this file's> <setup JSON> <pytest's arguments>`
# (runners/pytest-runner.ts says which, in order), run on the acceptance test files alone, with
# `--noconftest` and aca's configuration, so that nothing written during the run configures it.
#
# Before anything of the workspace is imported, the launcher makes the process non-dumpable (its
# /proc files closed to other processes), reads and removes the key file the worker left in the
# fresh output folder, takes the results channel off fd 3, makes modules outside the
# interpreter's own folders load from source only (no planted `.pyc` runs), and installs an audit
# hook (`sys.addaudithook`, which cannot be removed). The hook holds the key, the channel and what
# it saw in its closure, which nothing but the interpreter's list of hooks refers to. It:
# - signs every record it writes (HMAC-SHA256 with a sequence number), so a line written to the
#   channel by anything else is seen as such;
# - marks the run as tampered (a signed record, written at once) on walks of the object graph
#   (`gc.get_objects`, `get_referrers`, `get_referents`), trace or profile functions set by
#   anything but itself, any `ctypes` call, opening or listing the process's `/proc` descriptors,
#   memory or environment, code swapped on a function, frames changed, pytest's or pluggy's classes
#   patched, and a second audit hook;
# - watches, for the length of each test's call phase, for the test's own code (which must equal
#   what the read-only original compiles to, checked as the interpreter executes the module, and
#   be executed by pytest's or importlib's loader) to return rather than raise, in a frame whose
#   globals are its module's own dict, whose imported names still refer to what their modules hold
#   and whose other names are the real builtins (pytest_verdict_names.py); the call record says
#   whether it did (`body`); building a function around a test's code is tampering;
# - judges the values the tests compare (pytest_verdict_values.py): a comparison of the tests' that
#   runs a function of the code under test, or a value whose class compares through anything but a
#   function, is tampering;
# - says who raised a skip or an expected failure: pytest (a mark), the acceptance tests' own code
#   (`test`), or other code (`other`, the code under test).
# The pytest plugin it returns only tells the hook which test is running and what pytest reported;
# whatever code under test does to that plugin cannot make the hook say a test body returned.
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.

import sys


def _aca_verdict():
    # Only the interpreter's own paths: -I left the working folder and PYTHONPATH out of sys.path.
    import json
    import os

    setup = json.loads(sys.argv[1])
    args = sys.argv[2:]
    del sys.argv[1:2]

    # Not dumpable: /proc/<pid>/mem, environ and fd of this process are closed to other processes of
    # the sandbox user (a child the tests start cannot read this one's memory).
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:
        pass

    import _hashlib
    import _json
    import _thread
    import ast
    import builtins
    import dataclasses
    import dis
    import keyword
    import operator
    import types
    import unittest

    import pytest
    import pluggy
    import _pytest.config

    for name in _pytest.config.default_plugins:
        try:
            __import__("_pytest." + name)
        except ImportError:
            pass

    # The base commit's helpers in its test folders, read now, imported in place of the workspace's.
    helpers = {}
    for rel, full, original in setup.get("helpers", []):
        with open(original, "rb") as f:
            helpers[full] = f.read()
    trusted = _source_only(os, helpers, _top_level_helpers(os, setup))
    # The conftest.py files to load, read now: nothing of the workspace has run yet.
    extra_paths = setup.get("paths", [])
    support = []
    for rel, full, original in setup.get("support", []):
        with open(original, "rb") as f:
            support.append((full, f.read()))
    plugin = _install(setup, os, ast, dis, types, unittest, pytest, pluggy, _hashlib, _json, _thread,
                      (trusted, builtins, dataclasses, keyword, operator))
    del setup
    # The workspace first, as `-m` puts it, then the folders the command's PYTHONPATH named.
    sys.path[0:0] = [os.getcwd()] + [p for p in extra_paths if type(p) is str]
    plugins = [plugin]
    # The conftest.py files given with the acceptance tests and the base commit's are the only ones
    # loaded, as plugins, from what was read before anything ran: pytest itself loads none
    # (--noconftest).
    import types as _types

    for number, (full, source) in enumerate(support):
        module = _types.ModuleType("aca_conftest_%d" % number)
        module.__file__ = full
        folder = os.path.dirname(full)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        sys.modules[module.__name__] = module
        exec(compile(source, full, "exec", dont_inherit=True), module.__dict__)
        plugins.append(module)
    try:
        code = pytest.main(args, plugins=plugins)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 1
    return int(code)


def _install(setup, os, ast, dis, types, unittest, pytest, pluggy, _hashlib, _json, _thread, more):
    """
    Builds the audit hook that judges the run and returns the pytest plugin that feeds it. Nothing
    the plugin holds leads back here: the hook, its key, its channel and what it saw live only in
    this function's closure, which only the interpreter's list of audit hooks refers to.
    """
    # Every name the hook uses is bound here, so that nothing it runs is looked up again in a module
    # or in builtins that code under test could rebind.
    _type = type
    _len = len
    _str = str
    _int = int
    _bool = bool
    _tuple = tuple
    _frozenset = frozenset
    _bytes = bytes
    _dict = dict
    _exception = Exception
    frame_type = types.FrameType
    code_type = types.CodeType
    tb_type = types.TracebackType
    module_type = types.ModuleType
    function_type = types.FunctionType
    function_code = function_type.__dict__["__code__"].__get__
    type_module = type.__dict__["__module__"].__get__
    sys_modules = sys.modules
    getframe = sys._getframe
    setprofile = sys.setprofile
    settrace = sys.settrace
    audit = sys.audit
    getcwd = os.getcwd
    write = os.write
    get_ident = _thread.get_ident
    hmac_digest = _hashlib.hmac_digest
    quote = _json.encode_basestring_ascii

    key_file = setup["keyFile"]
    with open(key_file, "rb") as f:
        key = f.read()
    os.unlink(key_file)
    try:
        fd = os.dup(3)
        os.set_inheritable(fd, False)
        os.close(3)
    except OSError:
        fd = None

    machinery = _tuple(
        os.path.dirname(m.__file__) + "/" for m in (pytest, pluggy, unittest) if getattr(m, "__file__", None)
    ) + (os.path.dirname(pytest.__file__) + "/",)
    import _pytest

    machinery = machinery + (os.path.dirname(_pytest.__file__) + "/",)

    try:
        from _pytest.assertion.rewrite import rewrite_asserts
        import _pytest.assertion.rewrite as rewrite_module
    except ImportError:
        rewrite_asserts = rewrite_module = None
    trusted, builtins, dataclasses, keyword, operator = more
    real_builtins = _dict(builtins.__dict__)
    # The names pytest's assertion rewriting adds to a test module, and what they must hold.
    inserted = {"@py_builtins": builtins, "@pytest_ar": rewrite_module}
    # The two places the interpreter executes a module's code from: pytest's rewriting loader and
    # importlib's own. Their frames say which dict a module's code runs in.
    loader_codes = []
    try:
        loader_codes.append(rewrite_module.AssertionRewritingHook.exec_module.__code__)
    except AttributeError:
        pass
    bootstrap = sys_modules.get("importlib._bootstrap")
    frames_removed = getattr(getattr(bootstrap, "_call_with_frames_removed", None), "__code__", None)

    lookup, bindings_hold, builtins_hold = _aca_names(sys_modules, real_builtins, inserted)
    recognised = _aca_code(setup, os, ast, dis, types, rewrite_asserts, getframe, loader_codes, frames_removed, lookup)
    entry_of, learn = recognised[0], recognised[1]
    compared_names = _frozenset(["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                                 "__bool__", "__len__", "__contains__"])
    tampering = []
    state = {"test": None, "seen": None, "profiling": None, "done": False}
    own = [None]
    send = _aca_channel(fd, key, write, hmac_digest, quote)

    def tamper(what):
        if _len(tampering) < 20:
            tampering.append(what)
            send({"t": "tamper", "what": what})

    # The repository's own test files judged here (a run's targets and regressions, an
    # evaluation's tests): a sign against one of their tests makes that test unproven rather than
    # the whole run tampered, and the value checks leave them be, since a repository's own classes
    # define comparison as a matter of course.
    repository = _frozenset(setup.get("repository", []))

    def doubt(why):
        current = state["test"]
        if current is not None and current[0] in repository:
            state["seen"]["doubted"] = True
        else:
            tamper(why[:300])

    def doubt_value(why):
        current = state["test"]
        if current is None or current[0] not in repository:
            tamper(why[:300])

    proc_target = _aca_proc_target(getcwd)

    calling = [None]  # the built-in function the profiled thread is in, if any
    judged_call, judged_value, judged_name, forget_types, names_itself_trusted, type_verdict = _aca_values(
        trusted, entry_of, getframe, real_builtins, dis, dataclasses, keyword, operator)
    on_return, profile, local_repository, trace_repository, own_profile = _aca_watch(
        types, dis, sys_modules, trusted, recognised, (judged_value, judged_name), (lookup, bindings_hold, builtins_hold),
        (state, calling, own, doubt, doubt_value), (audit, get_ident, settrace, setprofile))

    def split_id(nodeid):
        address = nodeid.split("[", 1)[0]
        parts = address.split("::")
        return parts[0], parts[-1]

    def skip_origin(tb):
        # Who raised a skip or an expected failure: the innermost frame outside pytest, pluggy and
        # unittest. "test" when that is the acceptance tests' own code, else "other".
        origin = "pytest"
        depth = 0
        while _type(tb) is tb_type and depth < 200:
            frame = tb.tb_frame
            code = frame.f_code
            filename = code.co_filename
            if _type(filename) is _str and not filename.startswith(machinery):
                origin = "test" if entry_of(code) is not None else "other"
            tb = tb.tb_next
            depth += 1
        return origin

    def on_event(event, args):
        if event == "aca.ret":
            if _len(args) == 2:
                on_return(args[0], args[1])
        elif event == "aca.call":
            if _len(args) == 1 and _type(args[0]) is frame_type and state["test"] is not None:
                why = judged_call(args[0], calling[0])
                if why is not None:
                    doubt_value(why)
        elif event == "aca.begin":
            nodeid = args[0] if _len(args) == 1 else None
            if _type(nodeid) is not _str:
                return
            state["test"] = split_id(nodeid) + (nodeid,)
            state["seen"] = {"ran": False, "raised": False, "rebound": False, "doubted": False}
            traced = state["test"][0] in repository
            watching = trace_repository if traced else profile
            state["profiling"] = watching
            own_profile(watching, traced)
        elif event == "aca.end":
            nodeid = args[0] if _len(args) == 1 else None
            current = state["test"]
            own_profile(None, state["profiling"] is trace_repository)
            state["test"] = None
            if _type(nodeid) is not _str or current is None or current[2] != nodeid:
                return
            seen = state["seen"]
            state["body"] = (
                nodeid,
                "rebound" if seen["rebound"] and not seen["ran"] or seen["doubted"] else
                "ran" if seen["ran"] else "raised" if seen["raised"] else "not_run",
            )
        elif event == "aca.case":
            if _len(args) != 6:
                return
            nodeid, when, outcome, raw, xfail, tb = args
            if not (_type(nodeid) is _str and _type(when) is _str and _type(outcome) is _str
                    and _type(raw) is _str and _type(xfail) is _bool):
                return
            body = "unknown"
            if when == "call":
                recorded = state.get("body")
                state["body"] = None
                body = recorded[1] if recorded is not None and recorded[0] == nodeid else "not_run"
            origin = skip_origin(tb) if _type(tb) is tb_type else "none"
            send({"t": "case", "id": nodeid, "when": when, "outcome": outcome, "raw": raw,
                  "body": body, "xfail": xfail, "skip": origin})
        elif event == "aca.collect":
            if _len(args) == 2 and _type(args[0]) is _str and _type(args[1]) is _str:
                send({"t": "collect", "id": args[0], "outcome": args[1]})
        elif event == "aca.done":
            if _len(args) == 1 and _type(args[0]) is _int and not state["done"]:
                state["done"] = True
                send({"t": "done", "exit": args[0], "tampered": _len(tampering)})

    interpreter_files = trusted + ("<frozen ",)

    def set_by_interpreter():
        # Frames 0 and 1 are this function's and the hook's; 2 is the code that set the attribute.
        caller = getframe(2)
        if caller is None:
            return False
        filename = caller.f_code.co_filename
        return _type(filename) is _str and filename.startswith(interpreter_files)

    def hook(event, args):
        # Called for every audit event of the process: the common ones leave at the first test
        # (builtins.id is raised by the hook's own lookups, thousands of times a run).
        if event == "object.__getattr__" or event == "builtins.id" or event == "open" and not _len(args):
            return
        if event.startswith("aca."):
            on_event(event, args)
        elif event == "exec":
            if _len(args) == 1 and _type(args[0]) is code_type:
                learn(args[0])
        elif event == "function.__new__":
            if args and _type(args[0]) is code_type and entry_of(args[0]) is not None:
                tamper("a function was built around the acceptance tests' code (" + _str(args[0].co_name)[:80] + ")")
        elif event == "compile" or event == "code.__new__":
            if _len(args) >= 2 and names_itself_trusted(args[1]):
                tamper(event + ": code named after the interpreter's own files, made by the code under test")
        elif event == "marshal.loads" or event == "marshal.load":
            if names_itself_trusted(None):
                tamper(event + ": code unmarshalled by the code under test")
        elif event == "open" or event == "os.listdir" or event == "os.scandir":
            if args and proc_target(args[0]):
                tamper(event + " of " + _str(args[0])[:200] if _type(args[0]) in (_str, _bytes) else event)
        elif event == "object.__setattr__":
            if _len(args) < 2:
                return
            target, name = args[0], args[1]
            kind = _type(target)
            if _type(name) is not _str:
                return
            if name in compared_names or name == "__bases__":
                forget_types()
            if target is profile or target is trace_repository or target is local_repository:
                tamper("the verdict's profile function was changed (" + name[:40] + ")")
            elif name == "__code__":
                # The standard library does this too (`types.coroutine`, as asyncio loads); a test's
                # own code moved onto or off a function is tampering whoever does it.
                new = args[2] if _len(args) > 2 else None
                old = function_code(target) if kind is function_type else None
                if (kind is not function_type or not set_by_interpreter()
                        or (_type(new) is code_type and entry_of(new) is not None)
                        or (old is not None and entry_of(old) is not None)):
                    tamper("a function's code was replaced")
            elif name == "__class__" and _len(args) > 2:
                try:
                    why = type_verdict(args[2])
                except _exception:
                    why = None
                if why is not None:
                    tamper("an object's class was changed to one whose " + why[:200])
            elif kind is frame_type:
                tamper("a frame was changed (" + name[:40] + ")")
            elif kind is _type and not name.startswith("__"):
                module = type_module(target)
                if _type(module) is _str and module.split(".")[0] in ("_pytest", "pytest", "pluggy", "unittest"):
                    tamper("pytest's " + name + " was replaced")
        elif event == "object.__delattr__":
            forget_types()
        elif event in ("sys.settrace", "sys.setprofile"):
            if own[0] is None or own[0] != get_ident():
                current = state["test"]
                # The standard library's doctest runner puts back the trace function it found: in
                # a repository's own test that makes the test unproven, not the run tampered.
                if current is not None and current[0] in repository and set_by_interpreter():
                    doubt(event + " during " + current[2][:200])
                else:
                    tamper(event + " by the code under test")
        elif event.startswith("gc.get_"):
            tamper(event + ": a walk of the object graph")
        elif event.startswith("ctypes."):
            tamper(event + ": foreign memory and function access")
        elif event == "sys.addaudithook":
            tamper("another audit hook was added")

    sys.addaudithook(hook)
    return _aca_plugin(pytest, unittest, audit)


raise SystemExit(_aca_verdict())
