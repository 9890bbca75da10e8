#!/bin/sh
# The static checks of `npm test`, side by side (each is one process, mostly on one core): the
# type check, ESLint and Prettier. Fails if any fails.
#
#   sh scripts/checks.sh                  each check's output printed as it comes
#   sh scripts/checks.sh COMMAND [ARG…]   COMMAND runs beside the checks, which run at a lower
#                                         priority (they take the cores COMMAND leaves idle); its
#                                         output comes as it comes, each failed check's after it
#                                         under a heading of its own; fails if either fails
set -u
if [ "$#" -eq 0 ]; then
  npx tsc --noEmit & types=$!
  npx eslint . & lint=$!
  npx prettier --check . --log-level warn & format=$!
  status=0
  for job in $types $lint $format; do wait "$job" || status=1; done
  exit $status
fi

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
nice -n 10 npx tsc --noEmit >"$out/tsc" 2>&1 & types=$!
nice -n 10 npx eslint . >"$out/eslint" 2>&1 & lint=$!
nice -n 10 npx prettier --check . --log-level warn >"$out/prettier" 2>&1 & format=$!
"$@"
status=$?
for check in "tsc:$types" "eslint:$lint" "prettier:$format"; do
  name=${check%%:*}
  if ! wait "${check#*:}"; then
    printf '\n%s failed (scripts/checks.sh):\n' "$name"
    cat "$out/$name"
    status=1
  fi
done
exit $status
