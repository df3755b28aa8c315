"""IPython's event callbacks, with an interrupt that stops the request.

IPython reports and then drops a ``KeyboardInterrupt`` raised in a
``pre_execute``/``pre_run_cell``/``post_*`` callback, as it does an error:
an interrupt that landed while such a callback ran (autoreload's check, or
IPython's own bookkeeping on a loaded machine) let the cell run on to its end,
and the reply said "ok", so a client's queue of cells went on too.  Here an
interrupt leaves the callbacks and stops the request, wherever it landed.
"""

from IPython.core.events import EventManager


class InterruptibleEvents(EventManager):
    """An ``EventManager`` whose callbacks' interrupts propagate."""

    def trigger(self, event, *args, **kwargs):
        for callback in self.callbacks[event][:]:
            try:
                callback(*args, **kwargs)
            except KeyboardInterrupt:
                raise
            except Exception:  # reported, and the other callbacks still run: IPython's behaviour
                if self.print_on_error:
                    print(f"Error in callback {callback} (for {event}), with arguments args {args},"
                          f"kwargs {kwargs}:")
                self.shell.showtraceback()
