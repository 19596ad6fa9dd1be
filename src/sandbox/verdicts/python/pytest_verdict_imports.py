# How the pytest verdict process imports: modules outside the interpreter's own folders from their
# source only, and the base commit's helpers in its test folders from what was read before anything
# ran (see _source_only). Its text goes before pytest_verdict.py's in the verdict process's `-c`
# argument (runners/pytest-runner.ts); these run from the launcher, before anything of the
# workspace is imported.
# Written for any Python 3.8+ interpreter (a project's venv): no newer syntax.

import sys


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
