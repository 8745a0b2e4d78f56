"""The confirmation worker: `python -m breakscan.confirm.worker FAULT_FILE`.

Reads jobs (one JSON object per line) on stdin and runs them one after the other in this process,
resetting Dynamo between them, so that torch is imported once for many targets. Jobs and messages
travel on private copies of stdin and stdout; the user's code sees an empty stdin and a stdout
that goes to stderr, so whatever it reads or prints (from Python or C) cannot disturb them.
A hard crash leaves its Python stack in FAULT_FILE (faulthandler) for the parent to attribute.
With MEMORY_LIMIT (bytes), the process's data segment is capped there (RLIMIT_DATA, set before
torch is imported): an allocation past it fails, and the target is reported as out-of-memory.
RLIMIT_DATA counts the memory written to, not address space only reserved, as CUDA reserves it.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import resource
import runpy
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TextIO

from breakscan.confirm.attribute import (
    UserFiles,
    project_root,
    qualified_name,
    real_function_name,
    user_frame,
)
from breakscan.confirm.capture import capturing, parse_stack_trace, without_guard_profiling
from breakscan.confirm.protocol import encode, result_to_json, site_from_json
from breakscan.confirm.results import build_result
from breakscan.confirm.sources import use_sources
from breakscan.model import Frame, OutputCheck, TargetResult, TargetSpec, TargetStatus


def _private_streams() -> tuple[TextIO, TextIO]:
    """(jobs in, messages out) on private copies of fds 0 and 1; the user's code gets an empty
    stdin (an `input()` must not eat a job) and a stdout that goes to stderr."""
    jobs = os.fdopen(os.dup(0), "r", encoding="utf-8")
    channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    return jobs, channel


def _send(channel: TextIO, message: dict[str, Any]) -> None:
    channel.write(encode(message))
    channel.flush()


def main() -> None:
    jobs, channel = _private_streams()
    fault_file = open(sys.argv[1], "w")  # noqa: SIM115 - open for the life of the process
    faulthandler.enable(fault_file)
    if len(sys.argv) > 2:
        limit = int(sys.argv[2])
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    import torch

    with without_guard_profiling():
        _warm_up(torch)
        _send(channel, {"event": "ready", "torch": torch.__version__, "cuda": torch.cuda.is_available()})
        for line in jobs:
            job = json.loads(line)

            def phase(what: str) -> None:
                _send(channel, {"event": "phase", "phase": what})

            results = run_target(job, phase) if job["kind"] == "target" else run_script(job, phase)
            _send(channel, {"event": "result", "results": [result_to_json(r) for r in results]})


def _warm_up(torch) -> None:
    """Compile once before taking jobs: Dynamo's first compile imports much of torch lazily
    (seconds), which would otherwise count against the first target's timeout."""
    torch.compile(lambda x: x + 1, backend="eager")(torch.ones(1))
    torch._dynamo.reset()


def innermost_error(exc: BaseException) -> BaseException:
    """The error under TorchDynamo's wrappers ("RuntimeError when making fake tensor call" around
    the shape mismatch): the last of `_chain`."""
    return _chain(exc)[-1]


def _chain(exc: BaseException) -> list[BaseException]:
    """`exc`, then while the error at hand is a TorchDynamo wrapper, the one it was raised from or
    during (Dynamo re-raises `from None`: its context is followed all the same). The user's
    errors are never looked through, nor Dynamo's internal ones (the failure is Dynamo's own)."""
    from torch._dynamo.exc import InternalTorchDynamoError, TorchDynamoException

    chain = [exc]
    while isinstance(chain[-1], TorchDynamoException) and not isinstance(chain[-1], InternalTorchDynamoError):
        inner = chain[-1].__cause__ or chain[-1].__context__
        if inner is None or inner in chain:
            break
        chain.append(inner)
    return chain


def _frames(exc: BaseException) -> list[Frame]:
    frames = [Frame(f.filename, f.lineno or 0, f.name) for f in traceback.extract_tb(exc.__traceback__)]
    if isinstance(exc, SyntaxError) and exc.filename:
        frames.append(Frame(exc.filename, exc.lineno or 0, "<module>"))
    return frames + list(parse_stack_trace(str(exc)))  # Dynamo's errors quote the user code they were tracing


def describe_exception(exc: BaseException, user: UserFiles) -> str:
    """`Type: message (at path:line)`: the innermost real error (`innermost_error`), at the
    innermost line in the user's files of it or of the errors wrapping it."""
    chain = _chain(exc)
    inner, where = chain[-1], ""
    for error in reversed(chain):  # innermost first
        frames = _frames(error)
        found = user_frame(frames, user)
        if found is not None:
            where = f" (at {frames[found].path}:{frames[found].line})"
            break
    text = str(inner).strip().splitlines()
    return f"{type(inner).__name__}: {text[0] if text else ''}{where}"


def out_of_memory(exc: BaseException) -> bool:
    """An allocation that failed: Python's MemoryError, torch's CPU allocator or CUDA's."""
    import torch

    inner = innermost_error(exc)
    return isinstance(inner, (MemoryError, torch.OutOfMemoryError)) or "can't allocate memory" in str(inner)


def run_target(job: dict, phase: Callable[[str], None]) -> list[TargetResult]:
    """Compile the target and make its calls under the capture. With `sources`, the project is
    imported afresh with those texts in place of its files (a fix being tried); with `reference`,
    the compiled outputs are compared with the original's eager ones (see `_reference`).

    Under `--device auto` a target that fails on CUDA is run again on the CPU: model code written
    for the CPU (tensors made without a device) is common, and its breaks are what was asked for.
    The result says so; when the CPU fails too, the CUDA failure is the result."""
    result = _run_target_on(job, job["device"], phase)
    if job["device"] == "auto" and result.device == "cuda" and result.status == "failed":
        on_cpu = _run_target_on(job, "cpu", phase)
        if on_cpu.status == "ok":
            return [replace(on_cpu, device_fallback=f"failed on cuda: {result.error}")]
    return [result]


def _global_state() -> dict[str, Any]:
    """The global state TorchDynamo guards that a target's steps may switch from then on."""
    import torch

    return {"grad": torch.is_grad_enabled(), "deterministic": torch.are_deterministic_algorithms_enabled(),
            "warn_only": torch.is_deterministic_algorithms_warn_only_enabled(), "dtype": torch.get_default_dtype(),
            "threads": torch.get_num_threads(), "matmul_precision": torch.get_float32_matmul_precision(),
            "cudnn_tf32": torch.backends.cudnn.allow_tf32}


def _restore_global_state(state: dict[str, Any]) -> None:
    import torch

    torch.set_grad_enabled(state["grad"])
    torch.use_deterministic_algorithms(state["deterministic"], warn_only=state["warn_only"])
    torch.set_default_dtype(state["dtype"])
    if torch.get_num_threads() != state["threads"]:
        torch.set_num_threads(state["threads"])
    torch.set_float32_matmul_precision(state["matmul_precision"])
    torch.backends.cudnn.allow_tf32 = state["cudnn_tf32"]


def _run_target_on(job: dict, device: str, phase: Callable[[str], None]) -> TargetResult:
    import torch

    from breakscan.confirm import outputs
    from breakscan.confirm.prepare import forget_modules, prepare, resolve_device

    spec = TargetSpec(**job["spec"])
    user = UserFiles([project_root(spec.path)])
    started = time.perf_counter()
    calls, check, reference = 0, None, job.get("reference")
    torch._dynamo.reset()
    # A target module may set torch._dynamo.config at import, and a declared step switch global
    # state (`torch.set_grad_enabled(False)`, `torch.use_deterministic_algorithms(True)`): none of
    # it may leak into the next target.
    dynamo_config = torch._dynamo.config.get_config_copy()
    global_state = _global_state()
    if "sources" in job:
        use_sources(job["sources"], user.__contains__, forget_modules)

    def setup() -> None:
        nonlocal device, expected
        device = resolve_device(device)
        phase("importing")
        expected = _reference(spec, site, device, reference) if reference else None

    def compile_and_call() -> None:
        nonlocal calls, check
        prepared = prepare(spec, site, device)
        phase("compiling")
        compiled = prepared.target if spec.compiles_itself else torch.compile(prepared.target, backend="eager")
        if reference:
            actual = outputs.record(prepared, compiled)
            check = outputs.compare(expected, actual) if expected else None
            calls = prepared.call_count
        else:
            calls = len(prepared.run(compiled))

    site, expected = site_from_json(job["module"]), None
    status, error = attempt(setup, user)  # eager runs: outside the capture
    with capturing() as capture:
        if status == "ok":
            status, error = attempt(compile_and_call, user)
    torch._dynamo.config.load_config(dynamo_config)
    _restore_global_state(global_state)
    torch._dynamo.reset()
    if reference and expected is None and status == "ok" and "save" in reference:
        check = OutputCheck(False, None, math.inf, "two eager runs of the original from the same seed "
                            "give different outputs: a fix cannot be shown to change nothing")
    return build_result(spec.label, spec.path, capture.breaks, capture.graphs, user, status=status,
                        error=error, device=device, torch_version=torch.__version__,
                        wall_time=time.perf_counter() - started, recompiles=capture.recompiles,
                        compiles=capture.compiles, calls=calls, output_check=check)


def attempt(body: Callable[[], None], user: UserFiles) -> tuple[TargetStatus, str | None]:
    """Run the user's code; any failure of it is a result, not an error of breakscan."""
    from breakscan.confirm.prepare import Skip

    try:
        body()
    except Skip as exc:
        return "skipped", str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure of the user's code is a result
        return failure(exc, user)
    except SystemExit as exc:
        return "failed", f"SystemExit: the code called exit({exc.code})"
    return "ok", None


def _reference(spec: TargetSpec, site, device: str, reference: dict) -> dict | None:
    """With `save`: the original run eagerly, twice, each from a fresh build and the seed (a
    target that gives other outputs each time cannot show that a fix changed nothing: then
    None), kept in the file. With `compare`: what that file holds."""
    from breakscan.confirm import outputs
    from breakscan.confirm.prepare import prepare

    if "compare" in reference:
        return outputs.load(reference["compare"]) if os.path.exists(reference["compare"]) else None
    first = outputs.record(prepared := prepare(spec, site, device), prepared.target)
    second = outputs.record(again := prepare(spec, site, device), again.target)
    if not outputs.compare(first, second).same:
        return None
    outputs.save(first, reference["save"])
    return first


def failure(exc: BaseException, user: UserFiles) -> tuple[TargetStatus, str]:
    """(status, error) of a target that raised: out-of-memory when an allocation failed."""
    if out_of_memory(exc):
        limit = resource.getrlimit(resource.RLIMIT_DATA)[0]
        cap = f" (the memory limit is {limit / 2**20:.0f} MB: --memory-limit)" if limit != resource.RLIM_INFINITY else ""
        return "out-of-memory", f"{describe_exception(exc, user)}{cap}"
    return "failed", describe_exception(exc, user)


def run_script(job: dict, phase: Callable[[str], None]) -> list[TargetResult]:
    """Run the script unchanged; one result per top compiled function it executed."""
    import torch

    from breakscan.confirm.prepare import put_first_on_path, resolve_device

    script, module = job["script"], job["module"] and site_from_json(job["module"])
    user = UserFiles([project_root(script)])
    started = time.perf_counter()
    sys.argv = [script, *job["args"]]
    put_first_on_path(module.search_path if module else (os.path.dirname(script),))
    try:
        device, error = resolve_device(job["device"]), None
    except RuntimeError as exc:
        device, error = job["device"], str(exc)
    if device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # CUDA is initialised lazily: hidden in time
    phase("running")
    status: TargetStatus = "failed"
    with capturing() as capture:
        try:
            if error is None and module:
                runpy.run_module(module.name, run_name="__main__", alter_sys=True)
            elif error is None:
                runpy.run_path(script, run_name="__main__")
        except SystemExit as exc:
            if exc.code not in (None, 0):
                error = f"SystemExit: the script exited with status {exc.code}"
        except Exception as exc:  # noqa: BLE001 - the script's failure is a result
            status, error = failure(exc, user)
    common = dict(device=device, torch_version=torch.__version__, wall_time=time.perf_counter() - started)
    results = []
    for region in dict.fromkeys(e.region for e in [*capture.breaks, *capture.graphs, *capture.recompiles]):
        function = qualified_name(region.path, region.line, real_function_name(region.function))
        breaks = [b for b in capture.breaks if b.region == region]
        graphs = [g for g in capture.graphs if g.region == region]
        name = f"{function} ({os.path.basename(region.path)}:{region.line})"
        results.append(build_result(name, region.path, breaks, graphs, user,
                                    recompiles=[r for r in capture.recompiles if r.region == region],
                                    compiles=[c for c in capture.compiles if c.region == region],
                                    calls=0, **common))
    if error or not results:
        status = status if error else "skipped"
        error = error or "the script ran no torch.compile region"
        results.append(build_result(os.path.basename(script), script, [], [], user, status=status,
                                    error=error, **common))
    return results


if __name__ == "__main__":
    main()
