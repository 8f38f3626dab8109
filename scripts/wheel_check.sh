#!/usr/bin/env bash
# The package as a user installs it: build a wheel, install it (and the pinned dependencies) into a fresh venv
# outside the checkout, and run the nightly on the bundled sample data from another folder. Fails when the wheel
# lacks a file the command needs (the SQL models, their explanations, the report templates).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
PY="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# built from a copy of the tracked files: a build/ folder left in the checkout cannot slip stale modules in
mkdir "$work/src"
git -C "$repo" ls-files -z | (cd "$repo" && tar --null -T - -cf -) | tar -xf - -C "$work/src"
"$PY" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$work/dist" "$work/src"
"$PY" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir -r "$repo/requirements.lock"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-deps "$work"/dist/*.whl
cd "$work"
code=0
GX_ANALYTICS_ENABLED=false "$work/venv/bin/costledger" nightly "$repo/sample_data" --db "$work/ledger.duckdb" \
  --settings "$repo/costledger.toml" >"$work/nightly.log" 2>&1 || code=$?
# 4: the sample's reconciliation mismatches, on purpose (README)
if [ "$code" -ne 0 ] && [ "$code" -ne 4 ]; then
  cat "$work/nightly.log" >&2
  echo "wheel check: the installed wheel's nightly exited $code" >&2
  exit 1
fi
"$work/venv/bin/costledger" report --db "$work/ledger.duckdb" --format md --out "$work/report.md" >/dev/null
grep -q "## Decisions ahead" "$work/report.md"
# the explanations ship beside the models (sql/marts/*.explain.toml)
"$work/venv/bin/costledger" explain marts.monthly_break_even.break_even_accepted_tasks --db "$work/ledger.duckdb" \
  >"$work/explain.txt"
grep -q "F / (C - V)" "$work/explain.txt"
echo "wheel check: $(ls "$work/dist") installed outside the checkout; nightly exit $code, report written"
