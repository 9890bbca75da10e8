#!/bin/sh
# Installs the system tools the tests use, when missing: ffmpeg/ffprobe (to decode every audio
# format the server produces, and to encode AAC), curl, shellcheck (for docker/*.sh), Debian's
# Python with python3-websockets and python3-aiohttp (the Python agent frameworks' clients are
# replayed with the libraries they use, so that their limits are real), and Debian's Chromium (the browser page's test drives it headless; no browser is downloaded), and for
# the image test (npm run image:test) Podman with runc (crun refuses a hybrid cgroup layout),
# iptables (its port mapping) and debootstrap (to assemble the Node base image where Docker Hub
# cannot be reached), and strace (the telemetry test traces the server's connections).
# Debian/Ubuntu (apt); uses sudo when not root. Safe to run again: it does nothing when everything
# is there.
set -eu
missing=""
packages=""
for tool in ffmpeg:ffmpeg ffprobe:ffmpeg curl:curl shellcheck:shellcheck chromium:chromium \
  podman:podman runc:runc iptables:iptables debootstrap:debootstrap strace:strace; do
  command=${tool%%:*}
  package=${tool#*:}
  # debootstrap and iptables live in sbin, which a user's PATH may lack.
  command -v "$command" >/dev/null 2>&1 || [ -x "/usr/sbin/$command" ] || [ -x "/sbin/$command" ] && continue
  missing="$missing $command"
  case " $packages " in *" $package "*) ;; *) packages="$packages $package" ;; esac
done
if ! /usr/bin/python3 -c 'import websockets' >/dev/null 2>&1; then
  missing="$missing python3-websockets"
  packages="$packages python3 python3-websockets"
fi
if ! /usr/bin/python3 -c 'import aiohttp' >/dev/null 2>&1; then
  missing="$missing python3-aiohttp"
  packages="$packages python3 python3-aiohttp"
fi
[ -z "$missing" ] && exit 0
echo "installing:$missing (apt:$packages)"
if [ "$(id -u)" -eq 0 ]; then run=""; else run="sudo"; fi
$run apt-get update -qq
# shellcheck disable=SC2086 # one word per package
DEBIAN_FRONTEND=noninteractive $run apt-get install -y -qq --no-install-recommends $packages >/dev/null
