"""Progress on a terminal, drawn with rich on standard error and erased when done (the report then
reads as if it had not been there): the static scan (files done / total and the file just done,
from about a second on) and confirmation (each running target with its phase and elapsed time,
and a line per target as it finishes). The commands use these only when standard error is a
terminal, so piped and redirected output never holds progress text."""

from __future__ import annotations

import os
import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from breakscan.confirm.runner import Step

SCAN_DELAY = 1.0  # seconds: a scan that ends sooner shows nothing
_PATH_ROOM = 40  # characters of the file just linted
_PHASES = {"starting": "starting a worker (importing torch)", "importing": "importing the model",
           "compiling": "compiling under TorchDynamo", "running": "running the script"}


def terminal() -> Console:
    return Console(stderr=True)


class ScanProgress:
    """`with ScanProgress(console) as progress: lint_paths(..., on_file=progress.on_file)`."""

    def __init__(self, console: Console, delay: float = SCAN_DELAY):
        self._progress = Progress(TextColumn("linting"), BarColumn(bar_width=20), MofNCompleteColumn(),
                                  TextColumn("files"), TextColumn("{task.fields[current]}", style="dim"),
                                  console=console, transient=True)
        self._task = self._progress.add_task("lint", total=None, current="")
        self._lock = threading.Lock()  # the timer's start against the end of the scan
        self._ended = False
        self._timer = threading.Timer(delay, self._show)
        self._timer.daemon = True

    def _show(self) -> None:
        with self._lock:
            if not self._ended:
                self._progress.start()

    def __enter__(self) -> ScanProgress:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._ended = True
            self._progress.stop()

    def on_file(self, path: str, done: int, total: int) -> None:
        relative = os.path.relpath(path)
        shown = path if relative.startswith(os.pardir) else relative
        if len(shown) > _PATH_ROOM:  # its end: the file's name
            shown = "…" + shown[1 - _PATH_ROOM:]
        self._progress.update(self._task, completed=done, total=total, current=shown)


class ConfirmProgress:
    """`with ConfirmProgress(console) as progress: run_targets(..., progress=progress)`."""

    def __init__(self, console: Console):
        self._progress = Progress(SpinnerColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
                                  TextColumn("{task.fields[phase]}", style="dim"), console=console, transient=True)
        self._tasks: dict[int, TaskID] = {}  # job index -> rich task

    def __enter__(self) -> ConfirmProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._progress.stop()

    def __call__(self, step: Step) -> None:
        tag = f"[{step.index + 1}/{step.total}] {step.name}"
        if step.phase == "done":
            task = self._tasks.pop(step.index, None)
            if task is not None:
                self._progress.remove_task(task)
            self._progress.console.print(Text(f"breakscan: {tag}: {step.summary}"))
        elif step.index in self._tasks:
            # drawn now: a phase may last less than the display's refresh period
            self._progress.update(self._tasks[step.index], phase=_PHASES.get(step.phase, step.phase), refresh=True)
        else:
            self._tasks[step.index] = self._progress.add_task(f"{tag} ({os.path.basename(step.path)})",
                                                              phase=_PHASES.get(step.phase, step.phase))
