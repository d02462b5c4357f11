#!/usr/bin/env bash
# Checks what review should not have to: the code follows `.swift-format`, every public
# symbol of the library modules has a doc comment, and the DocC documentation of every
# library module builds without a warning (so every ``link`` resolves). `.ci/run` runs it
# after the tests; it exits non-zero on the first kind of failure it finds.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=(Diagnostics PropertyList Packages Versions Surveys SurveyStore)

echo "== formatting (swift format lint --strict, .swift-format)"
swift format lint --strict --recursive --parallel Sources Tests Examples Benchmarks/Sources Package.swift \
    Benchmarks/Package.swift

echo "== doc comments on every public symbol"
swift package dump-symbol-graph --skip-synthesized-members --skip-inherited-docs >/dev/null
python3 Scripts/check-docs.py "$(swift build --show-bin-path)/../symbolgraph" "${modules[@]}"

echo "== DocC, warnings as errors"
targets=()
for module in "${modules[@]}"; do targets+=(--target "$module"); done
swift package generate-documentation "${targets[@]}" --warnings-as-errors >/dev/null
echo "documentation, doc comments and formatting: all clean"
