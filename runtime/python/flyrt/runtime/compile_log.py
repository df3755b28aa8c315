"""Every compile of the process: what, for which key, why, how long."""

import collections
import time
from dataclasses import dataclass, field

from ..core.tables import html_table

KEPT = 1000  # the latest records; a long session's log stays bounded
_log = collections.deque(maxlen=KEPT)


@dataclass
class CompileRecord:
    launcher: str
    specialization: str
    reason: str
    milliseconds: float
    source: str  # "compiled", "disk cache" (traced, object loaded), "disk cache, no trace" or "reused"
    when: float = field(default_factory=time.time)

    def __str__(self):
        return (f"{self.launcher}[{self.specialization}]: {self.source} in {self.milliseconds:.1f} ms "
                f"({self.reason})")


def record(entry):
    _log.append(entry)


class CompileLog(list):
    """Compile records, oldest first (a table in notebooks)."""

    def _repr_html_(self):
        return html_table(("launcher", "specialization", "source", "ms", "reason"),
                          [(r.launcher, r.specialization, r.source, f"{r.milliseconds:.1f}", r.reason) for r in self])


def compile_log():
    """The latest records (up to KEPT), oldest first."""
    return CompileLog(_log)
