"""Upstream τ²-bench's side of the side-by-side benchmark (speed.bench.ts).

For every retail task: upstream's own fresh environment (`get_environment()`, the database read
from db.json as its runner does per task), the task's initial state, its gold actions replayed in
order, and each answer and the database hashes compared with the labels; one JSON line of timings:

    python -S upstream_driver.py <tau2-bench checkout> <shared data> <passes>
"""

import atexit
import json
import os
import shutil
import sys
import tempfile

import side_by_side

folder, data = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(folder, "src"))
# Upstream reads its domains from $TAU2_DATA_DIR/tau2/domains/<name>; the shared data keeps them
# at <data>/tau2/<name>.
layout = tempfile.mkdtemp(prefix="tau2-data-")
atexit.register(shutil.rmtree, layout, ignore_errors=True)
os.makedirs(os.path.join(layout, "tau2", "domains"))
os.symlink(os.path.join(os.path.abspath(data), "tau2", "retail"), os.path.join(layout, "tau2", "domains", "retail"))
os.environ["TAU2_DATA_DIR"] = layout

# Upstream's package imports its whole runner (LLM clients, logging, data frames, the evaluator's
# diffing); a gold replay uses none of them.
side_by_side.stand_in({"addict", "deepdiff", "docstring_parser", "httpx", "litellm", "loguru", "pandas", "rich", "toml"})

# Timed as part of the import: what upstream loads before it can replay anything.
from tau2.data_model.message import ToolCall  # noqa: E402
from tau2.domains.retail.environment import get_environment, get_tasks  # noqa: E402

side_by_side.imported()


def replay_pass(tasks, labels):
    agree = 0
    for task in tasks:
        label = labels[task.id]
        env = get_environment()
        state = task.initial_state
        if state is not None:
            env.set_state(state.initialization_data, state.initialization_actions, state.message_history or [])
        same = env.get_db_hash() == label["initial_db_hash"]
        actions = task.evaluation_criteria.actions or []
        for action, want in zip(actions, label["calls"]):
            answer = env.get_response(ToolCall(id=action.action_id, name=action.name, arguments=action.arguments, requestor=action.requestor))
            same = same and answer.content == want["content"] and answer.error == want["error"]
        agree += same and len(actions) == len(label["calls"]) and env.get_db_hash() == label["final_db_hash"]
    return agree


def main():
    tasks = get_tasks(None)
    with open(os.path.join(data, "tau2-labels", "retail.jsonl"), encoding="utf-8") as f:
        labels = {label["id"]: label for label in map(json.loads, filter(str.strip, f))}
    side_by_side.report(lambda _: replay_pass(tasks, labels), int(sys.argv[-1]), len(tasks))


main()
