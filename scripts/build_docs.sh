#!/usr/bin/env bash
# The documentation site: the pages of docs/ and an API reference drawn from the public modules'
# docstrings, built by MkDocs into build/docs/ with every warning an error (mkdocs.yml says what
# is checked). Installs nothing: MkDocs and its plugins are pinned in requirements.txt, which
# scripts/setup.sh installs into .venv. DOCS_PYTHON names another interpreter that has them.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${DOCS_PYTHON:-.venv/bin/python}
if ! "$python" -c "import mkdocs, mkdocstrings_handlers.python" 2>/dev/null; then
    echo "build_docs: $python has no mkdocs or mkdocstrings-python: run scripts/setup.sh" >&2
    exit 1
fi
"$python" -m mkdocs build --strict --config-file mkdocs.yml --site-dir build/docs
echo "build_docs: open build/docs/index.html"
