"""Exit codes and the usage error, shared by the command line and the commands it runs (which
import this module, never `cli`, so that there is no import cycle between them)."""

from __future__ import annotations

EXIT_CLEAN, EXIT_ERROR = 0, 2  # findings: 1, from `Report.exit_code`
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report a process ended by SIGINT (128 + 2)


class UsageError(Exception):
    """Bad input from the user (an option, a path, a config file): exit 2 with the message."""
