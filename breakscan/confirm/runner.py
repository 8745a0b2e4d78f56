"""Runs confirmation jobs in worker subprocesses: batched (one worker runs many targets, importing
torch once), up to two workers in parallel, one job at a time per worker so that a target that
hangs or crashes is known exactly; its worker is then killed and a fresh one takes the rest.
Ctrl-C kills every worker and raises `Interrupted` with the results of the targets that finished.

The parent never imports torch or the user's code; workers run in a temporary folder with
PYTHONDONTWRITEBYTECODE=1, so nothing is written into the user's tree.
"""

from __future__ import annotations

import contextlib
import os
import queue
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from breakscan.confirm.attribute import project_root
from breakscan.confirm.locate import module_site
from breakscan.confirm.process import STARTUP_SECONDS, WorkerDied, WorkerProcess, WorkerTimeout, environment
from breakscan.confirm.protocol import script_job, target_job
from breakscan.model import Break, Frame, GraphInfo, TargetResult, TargetSpec, TargetStatus
from breakscan.report.summary import break_counts


@dataclass(frozen=True)
class Step:
    """Where one confirmation job is, for a progress display."""

    index: int  # of the job, from 0
    total: int  # jobs in the run
    name: str
    path: str
    # "starting" (a worker imports torch), then the worker's phases ("importing", "compiling";
    # "running" for a script), then "done" with the results
    phase: str
    results: tuple[TargetResult, ...] = ()

    @property
    def summary(self) -> str:
        return "; ".join(break_counts(r) if r.status == "ok" else r.status for r in self.results)


Progress = Callable[[Step], None]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during confirmation, after every worker was stopped: `finished` holds, in order,
    the results of the targets that had finished (the others did not run to the end)."""

    def __init__(self, finished: list[TargetResult]):
        super().__init__()
        self.finished = finished


_STOP_SECONDS = 15.0  # how long Ctrl-C waits for a stopped worker's thread to close it
_PARALLEL_FROM = 4  # a second worker (another torch import) pays off from this many targets


class _IdleWorkers:
    """Workers kept between runs (`reusing_workers`), in the folder they were started in."""

    def __init__(self, folder: str):
        self.folder = folder
        self.workers: list[WorkerProcess] = []
        self.lock = threading.Lock()

    def take(self) -> WorkerProcess | None:
        with self.lock:
            return self.workers.pop() if self.workers else None

    def keep(self, worker: WorkerProcess) -> None:
        with self.lock:
            self.workers.append(worker)


_idle: _IdleWorkers | None = None


@contextlib.contextmanager
def reusing_workers() -> Iterator[None]:
    """Within the block, a run leaves its workers started for the next run (torch imported once
    for a sequence of runs that depend on each other, as `fix --verify`'s); they stop at its end."""
    global _idle
    if _idle is not None:  # an enclosing block keeps them already
        yield
        return
    with tempfile.TemporaryDirectory(prefix="breakscan-") as folder:
        _idle = _IdleWorkers(folder)
        try:
            yield
        finally:
            idle, _idle = _idle, None
            for worker in idle.workers:
                worker.close()


@dataclass(frozen=True)
class Job:
    payload: dict  # what the worker runs
    name: str  # for the results the parent makes itself (timeout, crash)
    path: str
    root: str  # the user's folder, to attribute a crash


class _Pool:
    """Threads that each drive one worker at a time through a shared queue of jobs."""

    def __init__(self, jobs: list[Job], *, timeout: float, parallel: int, progress: Progress | None,
                 memory_limit: int | None = None, stderr_to_terminal: bool = False):
        self.jobs, self.timeout, self.parallel = jobs, timeout, parallel
        self.memory_limit, self.stderr_to_terminal = memory_limit, stderr_to_terminal
        self.results: list[list[TargetResult]] = [[] for _ in jobs]
        self._todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for index in range(len(jobs)):
            self._todo.put(index)
        self._progress = progress
        self._lock = threading.Lock()  # progress calls, and the live workers with _stopping
        self._live: set[WorkerProcess] = set()
        self._stopping = False  # set on Ctrl-C: no worker starts and no result is kept after it
        self._cannot_start: str | None = None  # set once: then no job starts another worker

    def run(self) -> list[list[TargetResult]]:
        with contextlib.ExitStack() as stack:
            folder = _idle.folder if _idle else stack.enter_context(tempfile.TemporaryDirectory(prefix="breakscan-"))
            env = environment(self.parallel)
            threads = [threading.Thread(target=self._drain, args=(folder, env), daemon=True)
                       for _ in range(self.parallel)]
            try:
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
            except BaseException as interrupt:
                # Workers run in their own sessions (so that a kill takes their children too):
                # an interrupt does not reach them, so stop them here, and see them end: a
                # `join` that Ctrl-C interrupted takes its thread for finished (CPython 3.11), so
                # the threads, each woken to close its own worker, may not be waited for.
                with self._lock:
                    self._stopping = True
                    stopped = list(self._live)
                    for worker in stopped:
                        worker.stop()
                for worker in stopped:
                    worker.reap()
                for thread in threads:
                    thread.join(timeout=_STOP_SECONDS)  # a thread still waiting past this is left behind
                if isinstance(interrupt, KeyboardInterrupt):
                    raise Interrupted([r for results in self.results for r in results]) from None
                raise
        return self.results

    def _say(self, index: int, phase: str, results: tuple[TargetResult, ...] = ()) -> None:
        if self._progress:
            job = self.jobs[index]
            with self._lock:
                if not self._stopping:
                    self._progress(Step(index, len(self.jobs), job.name, job.path, phase, results))

    def _drain(self, folder: str, env: dict[str, str]) -> None:
        worker: WorkerProcess | None = _idle.take() if _idle else None
        if worker is not None:
            with self._lock:
                self._live.add(worker)  # Ctrl-C stops it as any other
        try:
            while not self._stopping:
                try:
                    index = self._todo.get_nowait()
                except queue.Empty:
                    return
                worker, results = self._run_one(worker, index, folder, env)
                if self._stopping:  # the worker was killed under it: not a result
                    return
                self.results[index] = results
                self._say(index, "done", tuple(results))
        finally:
            if worker and _idle and not self._stopping:
                with self._lock:
                    self._live.discard(worker)
                _idle.keep(worker)
            elif worker:
                self._retire(worker, worker.close)

    def _retire(self, worker: WorkerProcess, how: Callable[[], None]) -> None:
        how()
        with self._lock:
            self._live.discard(worker)

    def _start_worker(self, folder: str, env: dict[str, str]) -> WorkerProcess | None:
        """A started worker; None once the run is stopping."""
        with self._lock:
            if self._stopping:
                return None
            worker = WorkerProcess(folder, env, self.stderr_to_terminal, self.memory_limit)
            self._live.add(worker)
        worker.start()
        return worker

    def _run_one(self, worker: WorkerProcess | None, index: int, folder: str, env: dict[str, str]
                 ) -> tuple[WorkerProcess | None, list[TargetResult]]:
        """Run job `index`, starting a worker if needed; returns the worker still usable, if any."""
        job = self.jobs[index]
        started = time.monotonic()
        if worker is None and self._cannot_start:
            return None, [self._failure(job, "failed", self._cannot_start, None, started)]
        try:
            if worker is None:
                self._say(index, "starting")
                worker = self._start_worker(folder, env)
                if worker is None:
                    return None, []
                started = time.monotonic()  # the target's own time starts now
            return worker, worker.run(job.payload, self.timeout, lambda phase: self._say(index, phase))
        except WorkerTimeout:
            if worker.torch_version is None:
                status, error = "failed", f"the worker did not start within {STARTUP_SECONDS:g} s"
            else:
                status, error = "timeout", f"did not finish within {self.timeout:g} s"
        except WorkerDied:
            if worker.torch_version is None:
                status, error = "failed", f"the worker could not start: {worker.death(job.root)}"
            else:
                status, error = "crashed", worker.death(job.root)
        if worker.torch_version is None:
            self._cannot_start = error
        self._retire(worker, worker.kill)
        return None, [self._failure(job, status, error, worker, started)]

    @staticmethod
    def _failure(job: Job, status: TargetStatus, error: str, worker: WorkerProcess | None,
                 started: float) -> TargetResult:
        """The result the parent makes for a target whose worker could not give one."""
        device = job.payload.get("device", "auto")
        if device == "auto" and worker is not None and worker.torch_version:
            device = "cuda" if worker.cuda else "cpu"
        return TargetResult(name=job.name, path=job.path, status=status, error=error, device=device,
                            wall_time=round(time.monotonic() - started, 3),
                            torch_version=worker.torch_version if worker else None)


def _display_path(path: str) -> str:
    """Relative to the working folder when under it, as the user reached it."""
    relative = os.path.relpath(path)
    return path if relative.startswith(os.pardir) else relative


def _for_display(result: TargetResult, path: str) -> TargetResult:
    def frame(f: Frame) -> Frame:
        return replace(f, path=_display_path(f.path))

    def brk(b: Break) -> Break:
        library = replace(b.library, path=_display_path(b.library.path)) if b.library else None
        return replace(b, path=_display_path(b.path), stack=tuple(frame(f) for f in b.stack), library=library)

    def graph(g: GraphInfo) -> GraphInfo:
        return replace(g, path=_display_path(g.path) if g.path else None)

    return replace(result, path=path, breaks=tuple(brk(b) for b in result.breaks),
                   graphs=tuple(graph(g) for g in result.graphs),
                   recompiles=tuple(replace(r, path=_display_path(r.path)) for r in result.recompiles))


def run_targets(specs: list[TargetSpec], *, device: str = "auto", timeout: float = 300.0,
                progress: Progress | None = None, src_roots: tuple[str, ...] = (),
                memory_limit: int | None = None, extras: list[dict] | None = None) -> list[TargetResult]:
    """Confirm every spec; one result per spec, in order. Each file is imported as the module it
    is in its project (`src_roots`: config `src`), see `locate.py`. `memory_limit`: bytes per
    worker process (None: no limit). `extras`: more fields for each spec's job (replaced sources,
    a reference to compare outputs with: see the worker). Ctrl-C raises `Interrupted` with the
    finished results."""
    jobs = []
    for index, spec in enumerate(specs):
        absolute = os.path.abspath(spec.path)
        payload = target_job(replace(spec, path=absolute), device, module_site(absolute, src_roots))
        payload.update(extras[index] if extras else {})
        jobs.append(Job(payload, spec.label, spec.path, project_root(absolute)))
    parallel = 2 if len(jobs) >= _PARALLEL_FROM and (os.cpu_count() or 1) >= 2 else 1
    pool = _Pool(jobs, timeout=timeout, parallel=parallel, progress=progress, memory_limit=memory_limit)
    try:
        outcomes = pool.run()
    except Interrupted:
        raise Interrupted([_for_display(results[0], spec.path)
                           for spec, results in zip(specs, pool.results) if results]) from None
    return [_for_display(results[0], spec.path) for spec, results in zip(specs, outcomes)]


def run_script(script: str, args: list[str], *, device: str = "auto", timeout: float = 300.0,
               module: str | None = None, src_roots: tuple[str, ...] = (),
               memory_limit: int | None = None) -> list[TargetResult]:
    """Run the script as-is (its output goes to stderr); one result per top compiled function.
    With `module`, `script` is that module's file and it runs as `python -m module` would."""
    absolute = os.path.abspath(script)
    site = None
    if module is not None:
        found = module_site(absolute, src_roots)
        # `python -m` searches the working folder first, then the module's own project.
        site = replace(found, name=module, search_path=(os.getcwd(), *found.search_path))
    job = Job(script_job(absolute, args, device, site), module or os.path.basename(script), script,
              project_root(absolute))
    (results,) = _Pool([job], timeout=timeout, parallel=1, progress=None, memory_limit=memory_limit,
                       stderr_to_terminal=True).run()
    return [_for_display(r, _display_path(r.path)) for r in results]
