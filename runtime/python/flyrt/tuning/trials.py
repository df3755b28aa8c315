"""What a tuning tried, as a table (HTML in a notebook, text elsewhere),
and its progress while it runs."""

from ..core.tables import Table, aligned_text


def table(title, trials, best):
    """Each config tried: its median time, how it compares with the best,
    and the best's mark or why the config could not run."""
    best_ms = next((t.ms for t in trials if t.config is best and t.ms is not None), None)
    rows = []
    for trial in trials:
        ms = "-" if trial.ms is None else f"{trial.ms:.4f}"
        ratio = "-" if trial.ms is None or not best_ms else f"{trial.ms / best_ms:.2f}x"
        mark = "best" if trial.config is best else (trial.problem or "")
        rows.append((trial.config.describe(), ms, ratio, mark))
    headers = ("config", "median ms", "vs best", "")
    return Table(headers, rows, aligned_text(title, headers, rows))


class _Bar:
    def __init__(self, text, done, total):
        self.text, self.done, self.total = text, done, total

    def _repr_html_(self):
        return f'<progress value="{self.done}" max="{self.total}"></progress> {self.text}'

    def __repr__(self):
        return self.text


class Progress:
    """A sweep's progress, updated in place where a notebook shows it (a
    console shows its text); nothing outside IPython."""

    def __init__(self, title, total):
        self.title, self.total, self.handle = title, total, None
        try:
            from IPython import get_ipython
        except ImportError:
            return
        if total > 1 and get_ipython() is not None:
            from IPython.display import display

            self.handle = display(self._bar(0, "starting"), display_id=True)

    def _bar(self, done, what):
        return _Bar(f"{self.title}: {done}/{self.total} configs timed ({what})", done, self.total)

    def step(self, done, config):
        if self.handle is not None:
            self.handle.update(self._bar(done, config.describe()))

    def finish(self, what):
        if self.handle is not None:
            self.handle.update(self._bar(self.total, what))
