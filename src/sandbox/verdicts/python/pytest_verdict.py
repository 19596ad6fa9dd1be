# The pytest verdict process (see run-test-suite.ts): `python -I -B -u -c <pytest_verdict_values.py's,
# pytest_verdict_names.py's and this file's text> <setup JSON> <pytest's arguments>`, run on the
# acceptance test files alone, with `--noconftest` and aca's configuration, so that nothing written
# during the run configures it.
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


def _helper_module_names(os, setup):
    """
    The names a base test imports a helper by: dotted through the packages the base commit has
    above it (`tests.helpers` beside `tests/__init__.py`), or bare (see _top_level_helpers).
    """
    rels = set(rel for rel, full, original in setup.get("helpers", []))
    names = set(_top_level_helpers(os, setup))
    for rel in rels:
        parts = rel[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        first = len(parts) - 1
        while first > 0 and "/".join(parts[:first]) + "/__init__.py" in rels:
            first -= 1
        if first < len(parts) - 1:
            names.add(".".join(parts[first:]))
    return names


def _top_level_helpers(os, setup):
    """
    The helpers a base test imports by a bare name: pytest puts the first folder above a test file
    that is no package at the front of `sys.path`, so at the base commit `import helpers` beside
    `tests/test_calc.py` (no `tests/__init__.py`) finds `tests/helpers.py` before anything else. An
    `__init__.py` the run adds there moves pytest's folder up to the root, where a `helpers.py` of
    the run's would be found instead; these names keep finding the base commit's. Name -> path.
    """
    rels = set(rel for rel, full, original in setup.get("helpers", []))
    workspace_of = dict((rel, full) for rel, full, original in setup.get("helpers", []))
    folders = set()
    for rel, full, original in setup.get("tests", []):
        folder = os.path.dirname(rel)
        # The folder pytest would have put on the path for this test file at the base commit.
        while folder and (folder + "/__init__.py") in rels:
            folder = os.path.dirname(folder)
        # Only a test folder's own: above it, a folder's __init__.py is no helper, so not known here
        # (toolz/tests/ is a package of toolz/, which pytest's folder is then above).
        if "tests" in folder.split("/") or "test" in folder.split("/"):
            folders.add(folder)
    found = {}
    for rel in sorted(rels):
        name = os.path.basename(rel)
        parent = os.path.dirname(rel)
        if name == "__init__.py":
            name, parent = os.path.basename(parent), os.path.dirname(parent)
        elif name.endswith(".py"):
            name = name[:-3]
        else:
            continue
        if parent in folders and name not in found:
            found[name] = workspace_of[rel]
    return found


def _source_only(os, helpers, top_level):
    """
    Modules outside the interpreter's own folders load from their source, never from a cache beside
    it: a planted __pycache__ file (or a lone .pyc) runs no code of its own here. pytest's
    rewritten test files are compiled afresh too. A trusted helper (`helpers`: workspace path ->
    the base commit's source) found in a folder of the import path, as `name.py` or as a package
    `name/__init__.py`, is loaded from that source, whatever the folder holds now under that name:
    a helper rewritten, deleted, or shadowed by a package of the same name.
    """
    import importlib.machinery as machinery
    import site

    trusted = tuple(
        p.rstrip("/") + "/"
        for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, *getattr(site, "getsitepackages", list)()}
        if p
    )

    class SourceOnly(machinery.SourceFileLoader):
        def get_code(self, fullname):
            path = self.get_filename(fullname)
            return compile(self.get_data(path), path, "exec", dont_inherit=True)

    import importlib._bootstrap as bootstrap
    import importlib.util as util

    class TrustedHelper:
        # Not a SourceFileLoader: pytest's assertion rewriter, which reads a module's file itself,
        # leaves such a module to this loader even when asked to rewrite it.
        def __init__(self, fullname, path, source):
            self.name = fullname
            self.path = path
            self.source = source

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            # Through importlib's own call, whose frame tells the audit hook which dict the trusted
            # code runs in (see helper_names in _install).
            code = compile(self.source, self.path, "exec", dont_inherit=True)
            bootstrap._call_with_frames_removed(exec, code, module.__dict__)

        def get_filename(self, fullname=None):
            return self.path

        def get_source(self, fullname=None):
            return self.source.decode("utf-8", "replace")

        def is_package(self, fullname=None):
            return os.path.basename(self.path) == "__init__.py"

    class HelperFinder(machinery.FileFinder):
        # A FileFinder still, so that pkgutil.iter_modules and pkg_resources see the folder as before.
        def find_spec(self, fullname, target=None):
            tail = fullname.rpartition(".")[2]
            folder = os.path.abspath(self.path or ".")
            candidates = ((os.path.join(folder, tail, "__init__.py"), True),
                          (os.path.join(folder, tail + ".py"), False))
            if fullname in top_level:
                candidates = ((top_level[fullname], top_level[fullname].endswith("/__init__.py")),)
            for candidate, package in candidates:
                source = helpers.get(candidate)
                if source is not None:
                    return util.spec_from_file_location(
                        fullname, candidate, loader=TrustedHelper(fullname, candidate, source),
                        submodule_search_locations=[os.path.dirname(candidate)] if package else None)
            return machinery.FileFinder.find_spec(self, fullname, target)

    finder_class = HelperFinder if helpers else machinery.FileFinder
    cached_hook = finder_class.path_hook(*_loaders(machinery, machinery.SourceFileLoader, True))
    source_hook = finder_class.path_hook(*_loaders(machinery, SourceOnly, False))

    def hook(path):
        full = os.path.abspath(path or ".")
        return (cached_hook if (full + "/").startswith(trusted) else source_hook)(path)

    sys.path_hooks[:] = [h for h in sys.path_hooks if "FileFinder" not in getattr(h, "__qualname__", "")]
    sys.path_hooks.append(hook)
    sys.path_importer_cache.clear()
    import _pytest.assertion.rewrite as rewrite

    rewrite._read_pyc = lambda *args, **kwargs: None
    return trusted


def _loaders(machinery, source_loader, sourceless):
    loaders = [
        (machinery.ExtensionFileLoader, machinery.EXTENSION_SUFFIXES),
        (source_loader, machinery.SOURCE_SUFFIXES),
    ]
    if sourceless:
        loaders.append((machinery.SourcelessFileLoader, machinery.BYTECODE_SUFFIXES))
    return loaders


def _install(setup, os, ast, dis, types, unittest, pytest, pluggy, _hashlib, _json, _thread, more):
    """
    Builds the audit hook that judges the run and returns the pytest plugin that feeds it. Nothing
    the plugin holds leads back here: the hook, its key, its channel and what it saw live only in
    this function's closure, which only the interpreter's list of audit hooks refers to.
    """
    # Every name the hook uses is bound here, so that nothing it runs is looked up again in a module
    # or in builtins that code under test could rebind.
    _type = type
    _id = id
    _len = len
    _str = str
    _int = int
    _bool = bool
    _tuple = tuple
    _frozenset = frozenset
    _bytes = bytes
    _dict = dict
    _list = list
    _none = type(None)
    _float = float
    _complex = complex
    _ellipsis = Ellipsis
    _oserror = OSError
    _exception = Exception
    _any = any
    frame_type = types.FrameType
    code_type = types.CodeType
    tb_type = types.TracebackType
    module_type = types.ModuleType
    function_type = types.FunctionType
    function_code = function_type.__dict__["__code__"].__get__
    module_dict = module_type.__dict__["__dict__"].__get__
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

    returning = _frozenset(dis.opmap[n] for n in ("RETURN_VALUE", "RETURN_CONST") if n in dis.opmap)
    compared_names = _frozenset(["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
                                 "__bool__", "__len__", "__contains__"])
    suspending = _frozenset(dis.opmap[n] for n in ("YIELD_VALUE",) if n in dis.opmap)

    # Code objects the interpreter really executed as an acceptance module, by identity: id -> entry.
    genuine = {}
    kept = []
    tampering = []
    state = {"test": None, "seen": None, "profiling": None, "done": False}
    seq = [0]
    own = [None]

    def encode(value):
        t = _type(value)
        if t is _str:
            return quote(value)
        if t is _bool:
            return "true" if value else "false"
        if t is _int:
            return _int.__repr__(value)
        if value is None:
            return "null"
        if t is _list:
            return "[" + ",".join([encode(v) for v in value]) + "]"
        return quote("?")

    def send(record):
        if fd is None:
            return
        record["n"] = seq[0]
        seq[0] += 1
        body = ("{" + ",".join([quote(k) + ":" + encode(v) for k, v in record.items()]) + "}").encode()
        data = body + b"\t" + hmac_digest(key, body, "sha256").hex().encode() + b"\n"
        try:
            while data:
                data = data[write(fd, data):]
        except _oserror:
            pass

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

    calling = [None]  # the built-in function the profiled thread is in, if any
    judged_call, judged_value, judged_name, forget_types, names_itself_trusted, type_verdict = _aca_values(
        trusted, entry_of, getframe, real_builtins, dis, dataclasses, keyword, operator)

    lookup, bindings_hold, builtins_hold = _aca_names(sys_modules, real_builtins, inserted)

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
    raws = {}

    skip_types = (pytest.skip.Exception, pytest.xfail.Exception, unittest.SkipTest)
    xfail_type = pytest.xfail.Exception

    class AcaVerdict:
        """The pytest side: tells the audit hook where each test is. It holds nothing to forge with."""

        @staticmethod
        @pytest.hookimpl(hookwrapper=True, tryfirst=True)
        def pytest_runtest_call(item, audit=audit):
            audit("aca.begin", item.nodeid)
            try:
                yield
            finally:
                audit("aca.end", item.nodeid)

        @staticmethod
        @pytest.hookimpl(hookwrapper=True, trylast=True)
        def pytest_runtest_makereport(item, call, raws=raws):
            info = call.excinfo
            if info is None:
                raws[(item.nodeid, call.when)] = ("passed", None)
            else:
                skipping = info.errisinstance(skip_types)
                outcome = "skipped" if skipping and not info.errisinstance(xfail_type) else "failed"
                raws[(item.nodeid, call.when)] = (outcome, info.tb if skipping else None)
            yield

        @staticmethod
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_logreport(report, audit=audit, raws=raws):
            raw = raws.pop((report.nodeid, report.when), ("unknown", None))
            audit("aca.case", report.nodeid, report.when, report.outcome, raw[0],
                  hasattr(report, "wasxfail"), raw[1])

        @staticmethod
        @pytest.hookimpl(tryfirst=True)
        def pytest_collectreport(report, audit=audit):
            if report.failed or report.skipped:
                audit("aca.collect", report.nodeid, report.outcome)

        @staticmethod
        @pytest.hookimpl(trylast=True)
        def pytest_sessionfinish(session, exitstatus, audit=audit):
            audit("aca.done", int(exitstatus))

    return AcaVerdict


raise SystemExit(_aca_verdict())
