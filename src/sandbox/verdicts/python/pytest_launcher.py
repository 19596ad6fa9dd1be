# How aca starts pytest: `python -c <this file's text> <pytest's arguments>`, in place of
# `python -m pytest`. Both put the working folder first on `sys.path`, and the working folder is the
# workspace, which the code under test writes: a `pytest.py`, `pytest/`, `_pytest/`, `aca_results.py`
# or `json.py` there would be imported in place of pytest, aca's plugin or a module the plugin binds,
# and could forge the channel and the report before the plugin ever loaded. `-P` is no answer for
# every interpreter (a project's venv may predate 3.11); instead the launcher, which `-c` runs before
# anything is imported from that first entry, drops it, imports pytest, its built-in plugins and
# aca's from the interpreter's own paths (Debian's, or the venv's site-packages, read-only in the
# sandbox) and `PYTHONPATH` (aca's runner folder, read-only), registers aca's plugin ahead of every
# other (so neither a module nor an installed entry point by the name `aca_results` can stand in for
# it), and only then puts the working folder first on `sys.path`, as `-m` does, for the project's
# tests to import its modules. What the workspace supplies from then on is imported after the plugin
# has bound what it uses, like a conftest.py. The repository's own `PYTHONPATH` folders (a `src/`
# layout) are in the workspace too: they are held back with it and go right after it. Written for
# any Python 3: no newer syntax.

import sys
import os

if sys.path and sys.path[0] == "":
    del sys.path[0]

_workspace = os.getcwd()
_held = [p for p in sys.path if p == _workspace or p.startswith(_workspace + os.sep)]
sys.path[:] = [p for p in sys.path if p not in _held]

import importlib

import pytest
import _pytest.config

for name in _pytest.config.default_plugins:
    try:
        importlib.import_module("_pytest." + name)
    except ImportError:
        pass

import aca_results

sys.path[0:0] = [_workspace] + [p for p in _held if p != _workspace]
try:
    code = pytest.main(sys.argv[1:], plugins=[aca_results])
    sys.stdout.flush()
except BrokenPipeError:
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 1
raise SystemExit(int(code))
