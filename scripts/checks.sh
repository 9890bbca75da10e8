#!/bin/sh
# The static checks of `npm test`, side by side (each is one process, mostly on one core): the
# type check, ESLint and Prettier. Fails if any fails. The type check and Prettier keep what they
# found in node_modules/.cache/ and look again only at what changed since (tsc's incremental
# build info; Prettier's cache by file content); ESLint looks at every file each time, as its
# import-cycle rule reads across files.
#
#   sh scripts/checks.sh                  each check's output printed as it comes
#   sh scripts/checks.sh COMMAND [ARG…]   COMMAND runs beside the checks, which run at a lower
#                                         priority (they take the cores COMMAND leaves idle); its
#                                         output comes as it comes, each failed check's after it
#                                         under a heading of its own; fails if either fails
#
# With COMMAND, the unit test project (`vitest run --project unit`: pure code, no server, no
# timing) runs at the lower priority too, and its output follows COMMAND's. `npm test` gives the
# server projects as COMMAND: they spend much of their time waiting on sockets, timers and child
# processes, and the unit files take that time. On a first run without KOKORO_LEXICON_DIR, the
# unit project waits for COMMAND instead: vitest's global setup fetches the lexicons, once. The
# last line is `tests: N passed, N failed, N skipped` over both vitest runs (test/summary-reporter.ts).
set -u
TSC='npx tsc --noEmit --incremental --tsBuildInfoFile node_modules/.cache/typecheck.tsbuildinfo'
PRETTIER='npx prettier --check . --log-level warn --cache --cache-strategy content'
if [ "$#" -eq 0 ]; then
  $TSC & types=$!
  npx eslint . & lint=$!
  $PRETTIER & format=$!
  status=0
  for job in $types $lint $format; do wait "$job" || status=1; done
  exit $status
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
TEST_SUMMARY_FILE="$out/summary"
export TEST_SUMMARY_FILE
nice -n 10 $TSC >"$out/tsc" 2>&1 & types=$!
nice -n 10 npx eslint . >"$out/eslint" 2>&1 & lint=$!
nice -n 10 $PRETTIER >"$out/prettier" 2>&1 & format=$!
unit=
if [ -n "${KOKORO_LEXICON_DIR:-}" ] || [ -f .cache/misaki/gb_silver.json ]; then
  nice -n 10 npx vitest run --project unit >"$out/unit" 2>&1 & unit=$!
fi
"$@"
status=$?
if [ -n "$unit" ]; then
  wait "$unit" || status=1
  printf '\nunit tests, beside (scripts/checks.sh):\n'
  cat "$out/unit"
else
  npx vitest run --project unit || status=1
fi
for check in "tsc:$types" "eslint:$lint" "prettier:$format"; do
  name=${check%%:*}
  if ! wait "${check#*:}"; then
    printf '\n%s failed (scripts/checks.sh):\n' "$name"
    cat "$out/$name"
    status=1
  fi
done
if [ -s "$out/summary" ]; then
  awk '{ p += $1; f += $2; s += $3 } END { printf "\ntests: %d passed, %d failed, %d skipped\n", p, f, s }' \
    "$out/summary"
fi
exit $status
