"""Upstream BFCL's side of the side-by-side benchmark (speed.bench.ts).

Runs upstream's own prompt-mode decoder and AST checker, or its multi-turn checker on the
gold calls, over the same cases as our side, and prints one JSON line with the timings:

    python [-S] upstream_driver.py <berkeley-function-call-leaderboard> single <cases.jsonl> <data> <passes>
    python [-S] upstream_driver.py <berkeley-function-call-leaderboard> multi <data> <passes>

`cases.jsonl` holds `{"category", "id", "text", "valid"}` lines (model text and the label);
`<data>` is the shared BFCL data folder (BFCL_v4_*.json and possible_answer/).
"""

import importlib.abc
import importlib.machinery
import json
import os
import resource
import sys
import time
import types

started = time.perf_counter()
folder, mode = sys.argv[1], sys.argv[2]
sys.path.insert(0, folder)
if sys.flags.no_site:
    # Run with -S (as the bench does): the installed packages, without the start-up hooks (.pth
    # files) a machine may add to every Python process.
    import site

    sys.path.extend(p for p in [*site.getsitepackages(), site.getusersitepackages()] if os.path.isdir(p))

# The single-turn checker imports upstream's model registry, which imports every provider SDK and
# the Java/JavaScript parsers. Scoring Python calls uses none of them, so where one is not
# installed it is stood in for by an inert module (listed in the output; upstream's verdicts are
# still checked against the labels). A stand-in loads faster than the real SDK would, which only
# flatters upstream's import time.
UNUSED_BY_PYTHON_SCORING = {
    "anthropic", "cohere", "datamodel_code_generator", "filelock", "google", "httpx", "mistralai",
    "openai", "overrides", "qwen_agent", "tenacity", "tree_sitter", "tree_sitter_java",
    "tree_sitter_javascript", "writerai",
}
stood_in = set()


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
    """Last on the import path: answers only for the modules above that nothing else found."""

    def find_spec(self, fullname, path, target=None):
        if fullname.split(".")[0] not in UNUSED_BY_PYTHON_SCORING:
            return None
        stood_in.add(fullname.split(".")[0])
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec):
        return _InertModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []


# Timed as part of the import: what upstream loads before it can score anything.
if mode == "single":
    sys.meta_path.append(_StandIns())
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
else:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

imported = time.perf_counter()

# A model whose names keep their dots (no underscore-to-dot), as the labels were made.
MODEL = "gpt-4o-2024-11-20"


def json_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_category(data, category):
    """Entries by id, each with its reference answer, as upstream's runner pairs them."""
    entries = {e["id"]: e for e in json_lines(os.path.join(data, f"BFCL_v4_{category}.json"))}
    for answer in json_lines(os.path.join(data, "possible_answer", f"BFCL_v4_{category}.json")):
        entries[answer["id"]]["answer"] = answer["ground_truth"]
    return entries


def single_pass(cases, entries):
    agree = 0
    for case in cases:
        entry = entries[case["category"]][case["id"]]
        try:
            decoded = default_decode_ast_prompting(case["text"], ReturnFormat.PYTHON)
            valid = ast_checker(entry["function"], decoded, entry["answer"], Language.PYTHON, case["category"], MODEL)["valid"]
        except Exception:
            valid = False  # upstream's runner scores an output that fails to decode as invalid
        agree += valid == case["valid"]
    return agree


def multi_pass(entries, run):
    prefix = f"bench{run}"
    valid = 0
    for entry in entries.values():
        gold = entry["answer"]
        verdict = multi_turn_checker([[turn] for turn in gold], gold, entry, "multi_turn_base", prefix)
        valid += verdict["valid"]
    # Upstream keeps every instance in its module's globals; drop this pass's so passes are alike.
    for name in [n for n in vars(multi_turn_utils) if n.startswith(prefix + "_")]:
        del vars(multi_turn_utils)[name]
    return valid


def main():
    passes = int(sys.argv[-1])
    if mode == "single":
        cases = json_lines(sys.argv[3])
        data = sys.argv[4]
        entries = {c: load_category(data, c) for c in sorted({case["category"] for case in cases})}
        run = lambda _: single_pass(cases, entries)  # noqa: E731
        total = len(cases)
    else:
        entries = load_category(sys.argv[3], "multi_turn_base")
        run = lambda i: multi_pass(entries, i)  # noqa: E731
        total = len(entries)
    loaded = time.perf_counter()
    times, counts = [], []
    for i in range(passes):
        t = time.perf_counter()
        counts.append(run(i))
        times.append(time.perf_counter() - t)
    print(json.dumps({
        "importMs": (imported - started) * 1000,
        "loadMs": (loaded - imported) * 1000,
        "passMs": [t * 1000 for t in times],
        "agree": min(counts),
        "total": total,
        "maxRssKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "stoodIn": sorted(stood_in),
    }))


main()
