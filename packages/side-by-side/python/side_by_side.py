"""Upstream's side of a side-by-side benchmark (`@envace/side-by-side`).

A driver imports this module first, stands in for the modules its imports need but its work never
uses, imports upstream's code, loads the data, runs its passes and prints one JSON line:

    import side_by_side
    side_by_side.stand_in({"loguru", "litellm"})
    from upstream.module import work       # timed as import
    side_by_side.imported()
    data = load()                          # timed as loading the data
    side_by_side.report(lambda i: work(data), passes=int(sys.argv[-1]), total=len(data))
"""

import importlib.abc
import importlib.machinery
import json
import os
import resource
import sys
import time
import types

_started = time.perf_counter()
_imported = _started
stood_in = set()

if sys.flags.no_site:
    # Run with -S (as the bench does): the installed packages, without the start-up hooks (.pth
    # files) a machine may add to every Python process.
    import site

    sys.path.extend(p for p in [*site.getsitepackages(), site.getusersitepackages()] if os.path.isdir(p))


class _Inert:
    """Anything: called, read, combined or subclassed, it gives another inert thing."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Inert()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert()

    def __iter__(self):
        return iter(())

    def __or__(self, other):
        return _Inert()

    __ror__ = __and__ = __rand__ = __or__


class _InertType(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _inert_class(name)

    def __or__(cls, other):
        return cls

    __ror__ = __or__

    def __getitem__(cls, item):
        return cls


def _inert_class(name):
    return _InertType(name, (_Inert,), {})


class _InertModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _inert_class(name)


class _StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on the import path: answers only for the named modules that nothing else found."""

    def __init__(self, names):
        self.names = frozenset(names)

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in self.names:
            return None
        stood_in.add(fullname.split(".")[0])
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return _InertModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


def stand_in(names):
    """Where one of `names` is not installed, an inert module takes its place (listed in the report).

    Only for modules the timed work never uses: a stand-in loads faster than the real package
    would, which only flatters upstream's import time.
    """
    sys.meta_path.append(_StandIns(names))


def imported():
    """Marks the end of upstream's imports: what follows until `report` is loading the data."""
    global _imported
    _imported = time.perf_counter()


def report(run, passes, total):
    """Runs `run(i)` `passes` times and prints the figures; `run` returns how many items agreed."""
    loaded = time.perf_counter()
    times, counts = [], []
    for i in range(passes):
        t = time.perf_counter()
        counts.append(run(i))
        times.append(time.perf_counter() - t)
    print(json.dumps({
        "importMs": (_imported - _started) * 1000,
        "loadMs": (loaded - _imported) * 1000,
        "passMs": [t * 1000 for t in times],
        "agree": min(counts),
        "total": total,
        "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "stoodIn": sorted(stood_in),
    }))
