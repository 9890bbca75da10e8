#!/bin/sh
# Removes from a production node_modules what the server never loads (run after
# `npm prune --omit=dev` in the image build):
#   - onnxruntime-node's native binaries for other platforms and architectures (about 240 MB), and
#     the TensorRT provider library, which needs TensorRT (not in the image; only CUDA is used);
#   - kokoro-js's runtime dependencies: only its voices/ folder is used (model/voices.ts resolves
#     the package to find it), its JavaScript is never imported, so @huggingface/transformers,
#     onnxruntime-web, sharp and sharp's @img binaries are dead weight (about 160 MB), and so is
#     the phonemizer package it uses (our espeak-ng is @echogarden/espeak-ng-emscripten);
#   - jieba-wasm's builds for bundlers, Deno and browsers (only its Node.js build is loaded).
#
#   prune-modules.sh NODE_MODULES_DIR
set -eu

modules=${1:?usage: prune-modules.sh NODE_MODULES_DIR}
[ -d "$modules/onnxruntime-node" ] || {
  echo "prune-modules: $modules/onnxruntime-node not found" >&2
  exit 1
}

# The platform and architecture this Node runs on: the ones whose binaries are kept.
platform=$(node -p process.platform)
arch=$(node -p process.arch)

ort=$modules/onnxruntime-node/bin/napi-v6
[ -d "$ort/$platform/$arch" ] || {
  echo "prune-modules: onnxruntime-node has no binaries for $platform/$arch" >&2
  exit 1
}
for dir in "$ort"/*/*; do
  [ "$dir" = "$ort/$platform/$arch" ] || rm -rf "$dir"
done
for dir in "$ort"/*; do
  [ "$dir" = "$ort/$platform" ] || rm -rf "$dir"
done
rm -f "$ort/$platform/$arch/libonnxruntime_providers_tensorrt.so"

rm -rf "$modules/@huggingface/transformers" "$modules/@huggingface/jinja" \
  "$modules/onnxruntime-web" "$modules/sharp" "$modules/@img" "$modules/phonemizer"
rm -rf "$modules/jieba-wasm/pkg/bundler" "$modules/jieba-wasm/pkg/deno" "$modules/jieba-wasm/pkg/web"
rmdir "$modules/@huggingface" 2>/dev/null || true

[ -d "$modules/kokoro-js/voices" ] || {
  echo "prune-modules: kokoro-js/voices is missing; the server needs it" >&2
  exit 1
}
echo "prune-modules: kept onnxruntime-node's binaries for $platform/$arch:"
for file in "$ort/$platform/$arch"/*; do
  echo "  ${file##*/}"
done
