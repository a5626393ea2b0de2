#!/usr/bin/env bash
# Create $VENV with a supported Python and the pinned uv in it (used by `make install` and
# `make lock`). PYTHON= names the interpreter; otherwise the first supported one of python3,
# python3.13, python3.12, python3.11 on PATH. An existing $VENV of another Python version
# is rebuilt only when PYTHON= asks for it.
set -euo pipefail
VENV="${VENV:-.venv}"
UV_VERSION="${UV_VERSION:?}"
SUPPORTED="3.11 3.12 3.13"

minor_of() { "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null; }
supported() { case " $SUPPORTED " in *" $1 "*) return 0 ;; esac; return 1; }

if [ -n "${PYTHON:-}" ]; then
  version="$(minor_of "$PYTHON")" || { echo "PYTHON=$PYTHON does not run" >&2; exit 2; }
  if ! supported "$version"; then
    echo "PYTHON=$PYTHON is Python $version; mnemo supports Python $SUPPORTED" >&2
    exit 2
  fi
  python="$PYTHON"
else
  python=""
  for candidate in python3 python3.13 python3.12 python3.11; do
    command -v "$candidate" >/dev/null || continue
    version="$(minor_of "$candidate")" || continue
    if supported "$version"; then python="$candidate"; break; fi
  done
  if [ -z "$python" ]; then
    found="$(command -v python3 >/dev/null && minor_of python3 || echo none)"
    echo "no supported Python found (python3 is $found): mnemo supports Python $SUPPORTED." >&2
    echo "Install one, or name it: make install PYTHON=/path/to/python3.12" >&2
    exit 2
  fi
fi

if [ -x "$VENV/bin/python" ]; then
  if [ -n "${PYTHON:-}" ] && [ "$(minor_of "$VENV/bin/python")" != "$version" ]; then
    echo "rebuilding $VENV for Python $version (it had $(minor_of "$VENV/bin/python"))"
    rm -rf "$VENV"
  fi
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV with $python (Python $version)"
  "$python" -m venv "$VENV"
fi
if [ "$("$VENV/bin/python" -m uv --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi
