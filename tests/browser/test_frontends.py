"""JupyterLab and Notebook 7, in a real (headless) Chromium, on the xflydsl kernel.

A user's view: the notebook opens on the kernel, cells run from the
keyboard, outputs (streams, results, a widget, an image, a kernel's
recompile notice, the dependency picture) render in the page."""

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import nbformat
import pytest
from xflydsl_shell.dependency_graph import read_svg

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException  # noqa: E402

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM and CHROMEDRIVER), reason="no Chromium (Debian's chromium, chromium-driver: scripts/setup.sh)")
TOKEN = "xflydsl-browser-test"

CELLS = [
    "print('hello from', __import__('platform').python_version())",
    "6 * 7",
    # a flyrt kernel compiled and launched from the page
    """import numpy as np
import flyrt.compiler as flyc
import flyrt.expr as fx

def helper(v):
    return v + 1.0

@flyc.kernel
def kernel(x: fx.Tensor, out: fx.Tensor):
    out[fx.thread_idx.x] = helper(x[fx.thread_idx.x])

@flyc.jit
def launch(x: fx.Tensor, out: fx.Tensor):
    kernel(x, out).launch(block=(x.shape[0],))

x, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
launch(x, out); print('first:', out.tolist())""",
    "def helper(v):\n    return v * 10.0",
    "launch(x, out); print('after the edit:', out.tolist())",
    "%flydsl graph",
    "import ipywidgets\nipywidgets.IntSlider(value=3, max=10, description='lanes')",
    "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0]); plt.show()",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=[("lab", "lab/tree/browser.ipynb"), ("notebook", "notebooks/browser.ipynb")],
                ids=["jupyterlab", "notebook"])
def lab(tmp_path, request):
    app, path = request.param
    yield from _serve(tmp_path, app, path, CELLS)


def _serve(tmp_path, app, path, cells):
    """A Jupyter server on a notebook of `cells` (xflydsl), and Chromium on it."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    notebook.metadata = {"kernelspec": {"display_name": "Python 3.11 (xflydsl)", "language": "python",
                                        "name": "xflydsl"}}
    nbformat.write(notebook, tmp_path / "browser.ipynb")
    port = free_port()
    log = open(tmp_path / "lab.log", "w")
    # The page's own settings, not the user's: no question about Jupyter's news over the panels.
    settings = tmp_path / "lab-settings"
    news = settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    news.parent.mkdir(parents=True)
    news.write_text('{"fetchNews": "false"}')
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter", app, "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={tmp_path}"],
        stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings)))
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=1)
                break
            except OSError:
                if server.poll() is not None:
                    raise RuntimeError((tmp_path / "lab.log").read_text()) from None
                time.sleep(0.25)
        options = webdriver.ChromeOptions()
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,2000"):
            options.add_argument(argument)
        options.binary_location = CHROMIUM
        driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
        try:
            driver.get(f"{base}/{path}?token={TOKEN}")
            yield driver
        finally:
            driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def wait_for(condition, timeout=60, what="the page"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def wait_until_idle(driver):
    wait_for(lambda: driver.execute_script(
        "const s = document.querySelector('.jp-Notebook-ExecutionIndicator');"
        "return s && s.getAttribute('data-status') === 'idle'"), what="the kernel to be idle")


def outputs(driver):
    """Each code cell's output text, in order (an empty string for none)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-CodeCell')).map("
        "c => Array.from(c.querySelectorAll('.jp-OutputArea-output')).map(o => o.innerText).join('\\n'))")


def test_a_notebook_runs_on_xflydsl_in_the_browser(lab):
    driver = lab
    wait_for(lambda: driver.execute_script(
        "const k = document.querySelector('.jp-KernelName'); return k && k.textContent"
    ) == "Python 3.11 (xflydsl)", what="the xflydsl kernel name in the toolbar")
    wait_until_idle(driver)

    driver.find_elements(By.CSS_SELECTOR, ".jp-CodeCell .jp-InputPrompt")[0].click()  # command mode, cell 1
    for _ in CELLS:
        ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img[src^='data:image/png']"),
             what="the last cell's image")
    texts = outputs(driver)
    assert texts[0].startswith("hello from 3.11"), texts
    assert texts[1] == "42"
    assert "first: [1.0, 2.0, 3.0, 4.0]" in texts[2]
    assert "flyrt: evicted launcher launch: 'helper' in module __main__" in texts[3]
    assert "after the edit: [0.0, 10.0, 20.0, 30.0]" in texts[4]
    # the dependency picture: an SVG image the page decoded and laid out, with its edges
    (picture,) = driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img[src^='data:image/svg+xml']")
    assert driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", picture) > 100
    svg = urllib.parse.unquote(picture.get_attribute("src").split(",", 1)[1])
    edges = read_svg(svg)[1]
    assert ("launch", "kernel") in edges and ("kernel", "helper") in edges and ("helper", "__main__") in edges
    slider = driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output .widget-slider")
    assert slider and "lanes" in texts[6]  # rendered by the widget manager, over the kernel's comms
    assert driver.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img[src^='data:image/png']")


DEBUG_CELL = ("from kernel_helpers import scale\n\ndef add(a, b):\n    c = a + b\n    return scale(c)\n\n"
              "total = add(2, 3)\nprint('total', total)")
HELPER_MODULE = "def scale(v):\n    doubled = 2 * v\n    return doubled\n"


@pytest.fixture
def lab_debugging(tmp_path):
    (tmp_path / "kernel_helpers.py").write_text(HELPER_MODULE)  # the kernel runs in the notebook's folder
    yield from _serve(tmp_path, "lab", "lab/tree/browser.ipynb", [DEBUG_CELL, "print('scaled', scale(21))"])


def call_stack(driver):
    """The debugger's frames, each as its lines of text (read in one go: the panel re-renders as it steps)."""
    return [frame.split("\n") for frame in driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-DebuggerCallstackFrame')).map(f => f.innerText)")]


def variables_text(driver):
    return driver.execute_script(
        "const v = document.querySelector('.jp-DebuggerVariables-body'); return v ? v.innerText : ''")


def breakpoints(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-DebuggerBreakpoint')).map(b => b.innerText)")


def act_on(driver, script, action, what):
    """`action` on the element `script` finds, found again if a panel re-rendered it meanwhile (or
    it was not ready for input yet)."""
    for _ in range(10):
        try:
            return action(wait_for(lambda: driver.execute_script(script), what=what))
        except (StaleElementReferenceException, ElementNotInteractableException):
            time.sleep(0.2)
    raise AssertionError(f"{what} kept re-rendering")


def module_editor(driver):
    """The editor showing kernel_helpers.py's source, if one is on screen."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('.cm-editor')).find(e => e.offsetParent !== null"
        " && e.innerText.includes('doubled = 2 * v') && !e.closest('.jp-CodeCell'))")


def breakpoint_gutter(editor):
    """The clickable breakpoint places of a CodeMirror editor, line 1 first."""
    return [e for e in editor.find_elements(By.CSS_SELECTOR, ".cm-breakpoint-gutter .cm-gutterElement")
            if "height: 0" not in (e.get_attribute("style") or "")]


def test_jupyterlabs_debugger_stops_in_a_cell_and_in_a_helper_module(lab_debugging):
    driver = lab_debugging
    wait_until_idle(driver)
    # The toolbar's debugger switch is enabled only for a kernel whose spec advertises it.
    act_on(driver, "return Array.from(document.querySelectorAll('.jp-DebuggerBugButton')).find("
                   "b => b.getAttribute('aria-disabled') === 'false' && b.offsetParent !== null)",
           lambda toggle: toggle.click(), "an enabled debugger switch")
    wait_for(lambda: driver.find_elements(By.CSS_SELECTOR, ".jp-DebuggerVariables"), what="the debugger panel")
    # A breakpoint on the cell's line 4 (c = a + b), in the editor's breakpoint gutter.
    gutter = wait_for(lambda: breakpoint_gutter(driver.find_element(By.CSS_SELECTOR, ".jp-CodeCell")),
                      what="the breakpoint gutter")
    ActionChains(driver).move_to_element(gutter[3]).click().perform()
    wait_for(lambda: driver.execute_script("return Array.from(document.querySelectorAll("
                                           "'.jp-DebuggerBreakpoint-line')).map(b => b.innerText)") == ["4"],
             what="the breakpoint in the debugger's list")  # set in the kernel: the reply came
    driver.find_elements(By.CSS_SELECTOR, ".jp-CodeCell .jp-InputPrompt")[0].click()
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()

    frames = wait_for(lambda: call_stack(driver), what="the call stack of the stopped cell")
    assert frames[0][0] == "add" and len(frames) == 2, frames  # the user's frames only
    assert driver.find_elements(By.CSS_SELECTOR, ".jp-CodeCell .jp-DebuggerEditor-highlight")
    wait_for(lambda: {"a", "b", "2", "3"} <= set(variables_text(driver).split()),
             what="a = 2 and b = 3 among the variables of the stopped frame")

    # Step over the addition, then into the helper module's function.
    driver.find_element(By.CSS_SELECTOR, "jp-button[title='Next (F10)']").click()
    wait_for(lambda: "c" in variables_text(driver).split(), what="c in the variables after a step")
    driver.find_element(By.CSS_SELECTOR, "jp-button[title^='Step In']").click()
    frames = wait_for(lambda: [f for f in call_stack(driver) if f[0] == "scale"], what="the helper's frame")
    assert "kernel_helpers.py" in " ".join(frames[0]), frames
    # The debugger shows the module's source with the stopped line marked.
    wait_for(lambda: "doubled = 2 * v" in driver.execute_script(
        "return Array.from(document.querySelectorAll('.jp-DebuggerEditor-highlight')).map(e => e.innerText).join()"),
        what="the helper's line highlighted in its source")

    driver.find_element(By.CSS_SELECTOR, "jp-button[title^='Continue']").click()
    wait_for(lambda: "total 10" in outputs(driver)[0], what="the cell's output after continuing")

    # A breakpoint in the module itself: the Kernel Sources panel lists what the kernel imported.
    wait_for(lambda: not module_editor(driver), what="the stepped-into source to close after Continue")
    search = driver.find_element(By.CSS_SELECTOR, ".jp-Debugger-KernelSources-Filter")
    ActionChains(driver).click(search).send_keys("kernel_helpers").perform()
    act_on(driver, "return Array.from(document.querySelectorAll('.jp-DebuggerKernelSource-source'))"
                   ".find(s => s.innerText === 'kernel_helpers')",
           lambda source: ActionChains(driver).double_click(source).perform(), "the module among the kernel's sources")
    editor = wait_for(lambda: module_editor(driver), what="the module's source, opened")
    ActionChains(driver).move_to_element(breakpoint_gutter(editor)[1]).click().perform()
    wait_for(lambda: any(b.endswith("kernel_helpers.py\n2") for b in breakpoints(driver)),
             what="the module's breakpoint in the debugger's list")
    act_on(driver, "return Array.from(document.querySelectorAll('.lm-TabBar-tab'))"
                   ".find(t => t.innerText.trim() === 'browser.ipynb')",
           lambda tab: tab.click(), "the notebook's tab")
    act_on(driver, "return document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')[1]",
           lambda prompt: prompt.click(), "the second cell")
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.ENTER).key_up(Keys.SHIFT).perform()
    frames = wait_for(lambda: call_stack(driver), what="the call stack, stopped in the module")
    assert frames[0][0] == "scale" and "kernel_helpers.py" in " ".join(frames[0]), frames
    driver.find_element(By.CSS_SELECTOR, "jp-button[title^='Continue']").click()
    wait_for(lambda: "scaled 42" in outputs(driver)[1], what="the second cell's output after continuing")
