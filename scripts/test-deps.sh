#!/bin/sh
# Installs the system tools the tests use, when missing: ffmpeg/ffprobe (to decode every audio
# format the server produces, and to encode AAC) and curl. Debian/Ubuntu (apt); uses sudo when
# not root. Safe to run again: it does nothing when everything is there.
set -eu
missing=""
for tool in ffmpeg ffprobe curl; do
  command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
[ -z "$missing" ] && exit 0
echo "installing:$missing (apt)"
if [ "$(id -u)" -eq 0 ]; then run=""; else run="sudo"; fi
$run apt-get update -qq
DEBIAN_FRONTEND=noninteractive $run apt-get install -y -qq --no-install-recommends ffmpeg curl >/dev/null
