#!/bin/sh
# The static checks of `npm test`, side by side (each is one process, mostly on one core): the
# type check, ESLint and Prettier. Fails if any fails; each one's output is printed as it comes.
set -u
npx tsc --noEmit & types=$!
npx eslint . & lint=$!
npx prettier --check . --log-level warn & format=$!
status=0
for job in $types $lint $format; do wait "$job" || status=1; done
exit $status
