"""`jupyter console` with the xflydsl kernel, typed into a real terminal (tmux)."""

import shlex
import subprocess
import sys
import time
import uuid

import pytest

TIMEOUT = 60


class Terminal:
    """A tmux window running one command, read back as rendered text."""

    def __init__(self, command):
        self.socket = f"xflydsl-test-{uuid.uuid4().hex[:8]}"
        self.tmux("new-session", "-d", "-s", "t", "-x", "160", "-y", "60", command)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.socket, *args],
                              check=True, capture_output=True, text=True).stdout

    def screen(self):
        return self.tmux("capture-pane", "-p", "-t", "t", "-S", "-200")

    def type(self, text, enter=True):
        self.tmux("send-keys", "-t", "t", "-l", text)
        if enter:
            self.tmux("send-keys", "-t", "t", "Enter")

    def wait_for(self, text, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{self.screen()}")

    def close(self):
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def console():
    env = "PYDEVD_DISABLE_FILE_VALIDATION=1 TERM=xterm-256color"
    jupyter = shlex.join([sys.executable, "-m", "jupyter", "console", "--kernel", "xflydsl"])
    terminal = Terminal(f"env {env} {jupyter}")
    yield terminal
    terminal.close()


def test_console_multiline_block_output_and_input(console):
    console.wait_for("In [1]:")

    # The kernel's is_complete keeps the console asking for lines, indented.
    console.type("def twice(x):")
    console.wait_for("...:")
    console.type("return 2 * x")
    console.type("")
    console.wait_for("In [2]:")

    console.type("twice(21)")
    screen = console.wait_for("In [3]:")
    assert "Out[2]: 42" in screen

    console.type("name = input('your name? ')")
    console.wait_for("your name? ")
    console.type("Grace")
    console.wait_for("In [4]:")
    console.type("print('hello', name)")
    screen = console.wait_for("In [5]:")
    assert "hello Grace" in screen

    console.type("exit")
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            console.screen()
        except subprocess.CalledProcessError:
            break  # the console exited and took its tmux session along
        time.sleep(0.2)
    else:
        raise AssertionError(f"jupyter console did not exit:\n{console.screen()}")
