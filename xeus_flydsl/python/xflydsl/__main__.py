"""``python -m xflydsl -f CONNECTION_FILE`` (or the ``xflydsl`` command): serves
the kernel in this interpreter until a client shuts it down."""

import argparse
import platform
import sys

from ._build import PYTHON_VERSION


def unusable_interpreter():
    """Why this interpreter cannot run the launcher extension, or None."""
    built = "%d.%d" % PYTHON_VERSION
    here = "%d.%d" % sys.version_info[:2]
    if platform.python_implementation() != "CPython" or here != built:
        return (f"this xflydsl was built for CPython {built}, and {sys.executable} is "
                f"{platform.python_implementation()} {platform.python_version()}: install "
                f"xeus-flydsl into that interpreter's environment (pip picks the wheel for its "
                f"Python), or start the kernel with CPython {built}")
    if getattr(sys, "_is_gil_enabled", lambda: True)() is False:
        return (f"{sys.executable} is a free-threaded build, which xflydsl does not support: "
                f"start the kernel with the default (GIL) build of CPython {built}")
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(prog="xflydsl", description=__doc__)
    parser.add_argument("-f", "--connection-file", required=True,
                        help="the connection file the Jupyter client wrote")
    args = parser.parse_args(argv)
    problem = unusable_interpreter()
    if problem is None:
        try:
            from . import _launcher
        except ImportError as error:  # a broken install: the extension or a library it needs
            problem = f"cannot load the kernel's extension ({error}): reinstall xeus-flydsl"
    if problem is not None:
        print(f"xflydsl: {problem}", file=sys.stderr)
        return 1
    return _launcher.launch(args.connection_file)


if __name__ == "__main__":
    sys.exit(main())
