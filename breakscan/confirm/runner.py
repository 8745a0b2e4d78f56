"""Runs confirmation jobs in worker subprocesses: batched (one worker runs many targets, importing
torch once), up to two workers in parallel, one job at a time per worker so that a target that
hangs or crashes is known exactly; its worker is then killed and a fresh one takes the rest.

The parent never imports torch or the user's code; workers run in a temporary folder with
PYTHONDONTWRITEBYTECODE=1, so nothing is written into the user's tree.
"""

from __future__ import annotations

import json
import os
import queue
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable

from breakscan.confirm.attribute import UserFiles
from breakscan.confirm.protocol import decode, result_from_json, script_job, target_job
from breakscan.model import Break, Frame, GraphInfo, TargetResult, TargetSpec

Progress = Callable[[str], None]

_STARTUP_SECONDS = 180.0  # importing torch on a busy machine
_PARALLEL_FROM = 4  # a second worker (another torch import) pays off from this many targets
_FAULT_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')


@dataclass(frozen=True)
class Job:
    payload: dict  # what the worker runs
    name: str  # for the results the parent makes itself (timeout, crash)
    path: str
    root: str  # the user's folder, to attribute a crash


class WorkerTimeout(Exception):
    pass


class WorkerDied(Exception):
    pass


class Worker:
    """One `python -m breakscan.confirm.worker` process."""

    def __init__(self, folder: str, env: dict[str, str], stderr_to_terminal: bool):
        handle, self.fault_path = tempfile.mkstemp(dir=folder, suffix=".fault")
        os.close(handle)
        self.stderr_path = self.fault_path[: -len(".fault")] + ".stderr"
        self._stderr = None if stderr_to_terminal else open(self.stderr_path, "wb")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "breakscan.confirm.worker", self.fault_path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            cwd=folder, env=env, start_new_session=True,
        )
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        self._buffer = b""
        self.torch_version: str | None = None
        self.cuda = False

    def _message(self, deadline: float) -> dict:
        while True:
            line, newline, rest = self._buffer.partition(b"\n")
            if newline:
                self._buffer = rest
                message = decode(line.decode("utf-8", "replace") + "\n")
                if message is not None:
                    return message
                continue
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout
            if self._selector.select(remaining):
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise WorkerDied
                self._buffer += chunk

    def start(self) -> None:
        message = self._message(time.monotonic() + _STARTUP_SECONDS)
        self.torch_version, self.cuda = message["torch"], message.get("cuda", False)

    def run(self, payload: dict, timeout: float) -> list[TargetResult]:
        self.proc.stdin.write((json.dumps(payload) + "\n").encode())
        self.proc.stdin.flush()
        message = self._message(time.monotonic() + timeout)
        return [result_from_json(r) for r in message["results"]]

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.close()

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._selector.close()
        self.proc.stdout.close()
        if self._stderr:
            self._stderr.close()

    def death(self, root: str) -> str:
        """Why the process ended, and the user's line it was at when it can be told."""
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return "the worker stopped answering"
        if code < 0:
            number = -code
            name = signal.Signals(number).name if number in signal.valid_signals() else f"signal {number}"
            what = f"{name} ({signal.strsignal(number)})"
            if number == signal.SIGKILL:
                what += ", killed from outside, possibly for lack of memory"
        else:
            what = f"the worker exited with status {code}"
            tail = self._stderr_tail()
            what += f": {tail}" if tail else ""
        where = self._fault_site(root)
        return what + (f" at {where.path}:{where.line} in {where.function}" if where else "")

    def _fault_site(self, root: str) -> Frame | None:
        try:
            with open(self.fault_path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return None
        user = UserFiles([root])
        frames = [Frame(m["path"], int(m["line"]), m["function"]) for m in _FAULT_FRAME.finditer(text)]
        return next((f for f in frames if f.path in user), None)  # most recent call first

    def _stderr_tail(self) -> str:
        try:
            with open(self.stderr_path, encoding="utf-8", errors="replace") as handle:
                lines = [line.strip() for line in handle.read().splitlines() if line.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""


def _environment(parallel: int) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    if parallel > 1:
        env.setdefault("OMP_NUM_THREADS", "1")  # two workers on few cores: no oversubscription
    return env


class _Pool:
    def __init__(self, jobs: list[Job], *, timeout: float, parallel: int, progress: Progress | None,
                 stderr_to_terminal: bool = False):
        self.jobs, self.timeout, self.parallel = jobs, timeout, parallel
        self.stderr_to_terminal = stderr_to_terminal
        self.results: list[list[TargetResult] | None] = [None] * len(jobs)
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(jobs)):
            self._todo.put(index)
        self._progress = progress
        self._lock = threading.Lock()

    def run(self) -> list[list[TargetResult]]:
        with tempfile.TemporaryDirectory(prefix="breakscan-") as folder:
            env = _environment(self.parallel)
            threads = [threading.Thread(target=self._drain, args=(folder, env), daemon=True)
                       for _ in range(self.parallel)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        return [r or [] for r in self.results]

    def _say(self, message: str) -> None:
        if self._progress:
            with self._lock:
                self._progress(message)

    def _drain(self, folder: str, env: dict[str, str]) -> None:
        worker: Worker | None = None
        try:
            while True:
                try:
                    index = self._todo.get_nowait()
                except queue.Empty:
                    return
                job = self.jobs[index]
                self._say(f"[{index + 1}/{len(self.jobs)}] confirming {job.name} ({job.path})")
                worker, results = self._run_one(worker, job, folder, env)
                self.results[index] = results
                summary = ", ".join(
                    f"{r.status}, {r.graph_break_count} breaks, {r.graph_count} graphs" for r in results
                )
                self._say(f"[{index + 1}/{len(self.jobs)}] {job.name}: {summary}")
        finally:
            if worker:
                worker.close()

    def _run_one(self, worker: Worker | None, job: Job, folder: str, env: dict[str, str]
                 ) -> tuple[Worker | None, list[TargetResult]]:
        """Run `job`, starting a worker if needed; returns the worker still usable, if any."""
        started = time.monotonic()
        try:
            if worker is None:
                worker = Worker(folder, env, self.stderr_to_terminal)
                worker.start()
            return worker, worker.run(job.payload, self.timeout)
        except WorkerTimeout:
            if worker.torch_version is None:
                status, error = "failed", f"the worker did not start within {_STARTUP_SECONDS:g} s"
            else:
                status, error = "timeout", f"did not finish within {self.timeout:g} s"
        except WorkerDied:
            if worker.torch_version is None:
                status, error = "failed", f"the worker could not start: {worker.death(job.root)}"
            else:
                status, error = "crashed", worker.death(job.root)
        worker.kill()
        device = job.payload.get("device", "auto")
        if device == "auto":
            device = "cuda" if worker.cuda else "cpu"
        failed = TargetResult(name=job.name, path=job.path, status=status, error=error, device=device,
                              wall_time=round(time.monotonic() - started, 3),
                              torch_version=worker.torch_version)
        return None, [failed]


def _display_path(path: str) -> str:
    """Relative to the working folder when under it, as the user reached it."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _for_display(result: TargetResult, path: str) -> TargetResult:
    def frame(f: Frame) -> Frame:
        return replace(f, path=_display_path(f.path))

    def brk(b: Break) -> Break:
        return replace(b, path=_display_path(b.path), stack=tuple(frame(f) for f in b.stack))

    def graph(g: GraphInfo) -> GraphInfo:
        return replace(g, path=_display_path(g.path) if g.path else None)

    return replace(result, path=path, breaks=tuple(brk(b) for b in result.breaks),
                   graphs=tuple(graph(g) for g in result.graphs))


def run_targets(specs: list[TargetSpec], *, device: str = "auto", timeout: float = 300.0,
                progress: Progress | None = None) -> list[TargetResult]:
    """Confirm every spec; one result per spec, in order."""
    jobs = []
    for spec in specs:
        absolute = os.path.abspath(spec.path)
        jobs.append(Job(target_job(replace(spec, path=absolute), device), spec.label, spec.path,
                        os.path.dirname(absolute)))
    parallel = 2 if len(jobs) >= _PARALLEL_FROM and (os.cpu_count() or 1) >= 2 else 1
    outcomes = _Pool(jobs, timeout=timeout, parallel=parallel, progress=progress).run()
    return [_for_display(results[0], spec.path) for spec, results in zip(specs, outcomes)]


def run_script(script: str, args: list[str], *, device: str = "auto", timeout: float = 300.0
               ) -> list[TargetResult]:
    """Run the script as-is (its output goes to stderr); one result per top compiled function."""
    absolute = os.path.abspath(script)
    job = Job(script_job(absolute, args, device), os.path.basename(script), script,
              os.path.dirname(absolute))
    (results,) = _Pool([job], timeout=timeout, parallel=1, progress=None, stderr_to_terminal=True).run()
    return [_for_display(r, _display_path(r.path)) for r in results]
