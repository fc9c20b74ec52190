"""Upstream BFCL's side of the side-by-side benchmark (speed.bench.ts).

Runs upstream's own prompt-mode decoder and AST checker, or its multi-turn checker on the
gold calls, over the same cases as our side, and prints one JSON line with the timings:

    python [-S] upstream_driver.py <berkeley-function-call-leaderboard> single <cases.jsonl> <data> <passes>
    python [-S] upstream_driver.py <berkeley-function-call-leaderboard> multi <data> <passes>

`cases.jsonl` holds `{"category", "id", "text", "valid"}` lines (model text and the label);
`<data>` is the shared BFCL data folder (BFCL_v4_*.json and possible_answer/).
"""

import json
import os
import sys

import side_by_side

folder, mode = sys.argv[1], sys.argv[2]
sys.path.insert(0, folder)

# The single-turn checker imports upstream's model registry, which imports every provider SDK and
# the Java/JavaScript parsers. Scoring Python calls uses none of them.
UNUSED_BY_PYTHON_SCORING = {
    "anthropic", "cohere", "datamodel_code_generator", "filelock", "google", "httpx", "mistralai",
    "openai", "overrides", "qwen_agent", "tenacity", "tree_sitter", "tree_sitter_java",
    "tree_sitter_javascript", "writerai",
}


# Timed as part of the import: what upstream loads before it can score anything.
if mode == "single":
    side_by_side.stand_in(UNUSED_BY_PYTHON_SCORING)
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import default_decode_ast_prompting
else:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

side_by_side.imported()

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
        side_by_side.report(lambda _: single_pass(cases, entries), passes, len(cases))
    else:
        entries = load_category(sys.argv[3], "multi_turn_base")
        side_by_side.report(lambda i: multi_pass(entries, i), passes, len(entries))


main()
