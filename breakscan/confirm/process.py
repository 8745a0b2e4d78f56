"""The parent's handle on one worker process (`python -m breakscan.confirm.worker`): start it,
send it a job, wait for the answer with a deadline, and tell why it died when it did."""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from breakscan.confirm.attribute import UserFiles
from breakscan.confirm.protocol import decode, result_from_json
from breakscan.model import Frame, TargetResult

STARTUP_SECONDS = 180.0  # importing torch on a busy machine
_FAULT_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+) in (?P<function>\S+)')


class WorkerTimeout(Exception):
    pass


class WorkerDied(Exception):
    pass


class WorkerProcess:
    """One `python -m breakscan.confirm.worker` process."""

    def __init__(self, folder: str, env: dict[str, str], stderr_to_terminal: bool, memory_limit: int | None = None):
        handle, self.fault_path = tempfile.mkstemp(dir=folder, suffix=".fault")
        os.close(handle)
        self.stderr_path = self.fault_path[: -len(".fault")] + ".stderr"
        self._stderr = None if stderr_to_terminal else open(self.stderr_path, "wb")  # noqa: SIM115
        limit = [str(memory_limit)] if memory_limit is not None else []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "breakscan.confirm.worker", self.fault_path, *limit],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            cwd=folder, env=env, start_new_session=True,
        )
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        # `stop` wakes the thread waiting on the worker through this pipe: the worker's own pipe
        # may never close (a child of the user's code in another session can hold it open).
        self._wake_read, self._wake_write = os.pipe()
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._closed = False
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
            ready = {key.fileobj for key, _ in self._selector.select(remaining)}
            if self._wake_read in ready:
                raise WorkerDied
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    raise WorkerDied
                self._buffer += chunk

    def start(self) -> None:
        message = self._message(time.monotonic() + STARTUP_SECONDS)
        self.torch_version, self.cuda = message["torch"], message.get("cuda", False)

    def run(self, payload: dict, timeout: float, phase: Callable[[str], None]) -> list[TargetResult]:
        """The job's results; `phase` hears what the worker is doing meanwhile."""
        try:
            self.proc.stdin.write((json.dumps(payload) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:  # it died between jobs (a thread of the user's code, say)
            raise WorkerDied from None
        deadline = time.monotonic() + timeout
        message = self._message(deadline)
        while message["event"] == "phase":
            phase(message["phase"])
            message = self._message(deadline)
        return [result_from_json(r) for r in message["results"]]

    def stop(self) -> None:
        """Kill the worker from another thread than the one waiting on it, which then sees it
        die (and closes it) at once."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if not self._closed:  # closed: no one waits on it (and its number may be another file's now)
            os.write(self._wake_write, b"x")

    def reap(self) -> None:
        """Wait for the stopped process to end (not closing what its thread still reads)."""
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        self.stop()
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
        if not self._closed:
            self._closed = True
            os.close(self._wake_read)
            os.close(self._wake_write)
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


def environment(parallel: int) -> dict[str, str]:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    # The worker runs in a temporary folder: the user's relative entries must still mean theirs.
    user_path = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([package_root, *user_path])
    # Dynamo's profile of earlier runs (which sizes were dynamic) would hide recompilations and
    # change them from one run to the next: every run starts from no profile.
    env["TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO"] = "0"
    if parallel > 1:
        env.setdefault("OMP_NUM_THREADS", "1")  # two workers on few cores: no oversubscription
    return env
