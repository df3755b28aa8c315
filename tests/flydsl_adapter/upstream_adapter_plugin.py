"""pytest plugin: upstream FlyDSL's own tests, run with flyrt's adapter active.

    scripts/run_upstream_flydsl_tests.sh /path/to/FlyDSL/checkout

``FLYRT_GLOBAL_DRIFT`` picks the policy (raise: FlyDSL's contract, the
default; recompile: the kernel's). At the end it prints how many FlyDSL
functions the adapter guarded, so a run that never reached it shows.
"""

import os

import flyrt.flydsl_adapter as adapter


def pytest_configure(config):
    if not adapter.install(global_drift=os.environ.get("FLYRT_GLOBAL_DRIFT", "raise")):
        raise RuntimeError("the adapter does not know this FlyDSL; nothing would be tested")


def pytest_terminal_summary(terminalreporter):
    from flyrt.flydsl_adapter import guarded_jit

    handles = list(guarded_jit._handles.values())
    terminalreporter.write_line(
        f"flyrt adapter ({os.environ.get('FLYRT_GLOBAL_DRIFT', 'raise')}): {len(handles)} FlyDSL functions guarded, "
        f"{sum(h.calls for h in handles)} calls validated, {sum(h.traces for h in handles)} traces recorded")
