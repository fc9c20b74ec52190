"""The official Tinker Python SDK's request building for the batch of `src/protocol.bench.ts`.

Run by the bench with the interpreter in TINKER_SDK_PYTHON (one with the `tinker` package): it
builds the same datums from Python lists (the formulas match the bench's), then times what the
SDK does for one `forward_backward` (SDK 0.25: `forward_backward_request_to_proto` and
`SerializeToString`, then `zstandard` when the server asks for compression). Prints one JSON line.
"""

import json
import sys
import time

import zstandard
from tinker import types
from tinker.proto.request_conv import forward_backward_request_to_proto

rows, length, vocab = (int(a) for a in sys.argv[1:4])


def row(r):
    tokens = [(r * 31 + t * 7) % vocab for t in range(length)]
    targets = [(r * 31 + (t + 1) * 7) % vocab for t in range(length)]
    prompt = length // 4
    logprobs = [0.0 if t < prompt else -(((r * 1000003 + t * 7919) % 100000) / 20000) for t in range(length)]
    advantages = [0.0 if t < prompt else (0.5 if r % 2 else -0.5) for t in range(length)]
    return tokens, targets, logprobs, advantages


lists = [row(r) for r in range(rows)]


def best(run, times=3):
    out = None
    fastest = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        out = run()
        fastest = min(fastest, time.perf_counter() - start)
    return out, fastest * 1000


def datums():
    return [
        types.Datum(
            model_input=types.ModelInput.from_ints(tokens),
            loss_fn_inputs={"target_tokens": targets, "logprobs": logprobs, "advantages": advantages},
        )
        for tokens, targets, logprobs, advantages in lists
    ]


data, datum_ms = best(datums)


def build():
    request = types.ForwardBackwardRequest(
        forward_backward_input=types.ForwardBackwardInput(data=data, loss_fn="importance_sampling"),
        model_id="bench",
        seq_id=1,
    )
    return forward_backward_request_to_proto(request).SerializeToString()


body, build_ms = best(build)
compressed, zstd_ms = best(lambda: zstandard.ZstdCompressor().compress(body))
print(json.dumps({"datums_ms": datum_ms, "build_ms": build_ms, "bytes": len(body), "zstd_ms": zstd_ms, "zstd_bytes": len(compressed)}))
