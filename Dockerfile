# Kokoro-82M streaming TTS server as an Amazon SageMaker real-time endpoint image.
#
#   docker build --target gpu -t kokoro-tts:gpu .    # CUDA 13 + cuDNN 9 (ml.g5: NVIDIA A10G)
#   docker build --target cpu -t kokoro-tts:cpu .
#   docker run --gpus all IMAGE gpu-check             # proves CUDA loads, and measures it
#
# `npm run image:test` builds the cpu target (docker or podman), runs it and checks it.
#
# Every stage is linux/amd64: SageMaker's instances are x86_64, and a build on an arm64 machine
# (Apple silicon) must not quietly produce an image that cannot run there.
#
# No `# syntax=` line: the builder's own Dockerfile frontend has what this file uses (RUN --mount
# with secrets and caches), and a syntax line would make BuildKit pull a frontend image first.
#
# Weights are not in the image: SageMaker mounts them at /opt/ml/model (or run with
# -v "$PWD/models/kokoro-82m:/opt/ml/model:ro"). `--build-arg BAKE_MODEL=1` (and optionally
# `--build-arg KOKORO_DTYPE=fp16`) downloads them at build time into /opt/kokoro-model instead, which
# the entrypoint uses whenever /opt/ml/model is missing or empty (SageMaker's mount would hide
# anything baked at /opt/ml/model itself). What is baked is fetch-model's default, the timestamped
# export (onnx-community/Kokoro-82M-v1.0-ONNX-timestamped), so word and phoneme timestamps work.
#
# Behind a TLS-intercepting proxy, give npm (and the weights download) the proxy's CA bundle as a
# secret, which no layer keeps: `--secret id=ca_bundle,src=/etc/ssl/certs/ca-certificates.crt`.

# One Node for everything: the build stages, the cpu image, and the binary copied into the gpu image,
# so the native addons are built against and run on the same Node. Pin a digest
# (node:26-bookworm-slim@sha256:...) for reproducible builds.
ARG NODE_IMAGE=node:26-bookworm-slim
# onnxruntime-node 1.30's CUDA provider (NuGet Microsoft.ML.OnnxRuntime.Gpu.Linux 1.30.0) is a CUDA 13
# build that needs cuDNN 9: since ONNX Runtime 1.27 the GPU packages on NuGet are built with CUDA 13,
# and the CUDA 12 ones moved to a separate, deprecated feed (see the README, "GPU"). CUDA 13 needs
# NVIDIA driver 580 or newer on the host: SageMaker's al2023-ami-sagemaker-inference-gpu-4-1, which
# scripts/deploy.ts selects for GPU instances. Runtime flavour: no compiler, and no driver (the host
# provides it). docker/check-cuda-deps.sh below proves at build time that the two match.
ARG CUDA_IMAGE=nvidia/cuda:13.0.2-cudnn-runtime-ubuntu24.04

FROM --platform=linux/amd64 ${NODE_IMAGE} AS node

# ---- ffmpeg for AAC only ------------------------------------------------------------------------
# AAC is the one format not encoded in JavaScript/WebAssembly: model/audio/aac.ts streams it through
# ffmpeg's native encoder. Debian's ffmpeg package pulls in about 700 MB of libraries (every codec,
# X11, GPU APIs); this is Debian's own ffmpeg source (the version bookworm ships, with its security
# fixes) configured with nothing but what aac.ts runs: raw s16le from a pipe, the aac encoder (with
# the resampler it converts samples through), ADTS to a pipe. A 1.4 MB binary that needs only libc,
# LGPL (no --enable-gpl), byte-identical output to Debian's ffmpeg, and far quicker to start (few
# libraries to load; docs/experiments.md has the figures). Glibc 2.36, so it also runs on the gpu
# target's Ubuntu 24.04.
FROM node AS ffmpeg
RUN sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc libc6-dev make xz-utils \
 && mkdir /src && cd /src \
 && apt-get source --download-only ffmpeg \
 && tar -xf ffmpeg_*.orig.tar.xz && cd ffmpeg-*/ \
 && ./configure --prefix=/usr/local --disable-everything --disable-autodetect --disable-doc \
      --disable-network --disable-debug --disable-x86asm --disable-ffplay --disable-ffprobe \
      --disable-avdevice --disable-swscale --disable-postproc --enable-swresample \
      --enable-demuxer=pcm_s16le --enable-decoder=pcm_s16le --enable-filter=aresample \
      --enable-encoder=aac --enable-muxer=adts --enable-protocol=pipe \
 && make -j"$(nproc)" ffmpeg \
 && install -D -m 0755 ffmpeg /usr/local/bin/ffmpeg \
 && install -D -m 0644 -t /usr/local/share/doc/ffmpeg LICENSE.md COPYING.LGPLv2.1 \
 && printf 'Built from Debian source %s with:\n%s\n' "$(ls /src/*.dsc)" \
      "$(/usr/local/bin/ffmpeg -hide_banner -buildconf)" > /usr/local/share/doc/ffmpeg/BUILD \
 && /usr/local/bin/ffmpeg -hide_banner -encoders | grep -q ' aac ' \
 && /usr/local/bin/ffmpeg -version | head -n 1

# ---- dependencies -------------------------------------------------------------------------------
# --ignore-scripts: no dependency's install script is needed at run time (sharp and esbuild serve
# only kokoro-js's and the tests' unused paths), and the one that matters is run explicitly below,
# whatever npm version's policy on install scripts is. The client is a workspace (packages/client):
# npm ci needs its manifest.
FROM node AS manifest
WORKDIR /opt/program
COPY package.json package-lock.json .npmrc ./
COPY packages/client/package.json ./packages/client/

FROM manifest AS deps-cpu
RUN --mount=type=cache,target=/root/.npm --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_bundle; fi \
 && npm ci --no-audit --no-fund --ignore-scripts

# onnxruntime-node's own install script fetches the CUDA provider libraries from NuGet: forced here
# (ONNXRUNTIME_NODE_INSTALL=1), since .npmrc skips it everywhere else.
FROM deps-cpu AS deps-gpu
RUN --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_bundle; fi \
 && ONNXRUNTIME_NODE_INSTALL=1 node node_modules/onnxruntime-node/script/install.js \
 && test -f node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime_providers_cuda.so

# ---- TypeScript -> dist/ (once for both targets; npm's prebuild builds the client package first) --
FROM deps-cpu AS compile
COPY tsconfig.json tsconfig.build.json ./
COPY server ./server
COPY model ./model
COPY protocol ./protocol
COPY packages ./packages
COPY scripts ./scripts
RUN npm run build && test -f dist/server/main.js && test -f dist/model/kokoro/config.json

# ---- production node_modules --------------------------------------------------------------------
FROM deps-cpu AS prod-cpu
COPY docker/prune-modules.mjs ./docker/
RUN npm prune --omit=dev --no-audit --no-fund --ignore-scripts && node docker/prune-modules.mjs node_modules

FROM deps-gpu AS prod-gpu
COPY docker/prune-modules.mjs ./docker/
RUN npm prune --omit=dev --no-audit --no-fund --ignore-scripts && node docker/prune-modules.mjs node_modules

# ---- optional baked weights ---------------------------------------------------------------------
FROM compile AS model
ARG BAKE_MODEL=0
ARG KOKORO_DTYPE=fp32
ARG HF_ENDPOINT
# The cache mount keeps downloaded files across builds (fetch-model skips complete files).
RUN --mount=type=cache,target=/var/cache/kokoro-model --mount=type=secret,id=ca_bundle \
    if [ -s /run/secrets/ca_bundle ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca_bundle; fi \
 && mkdir -p /opt/kokoro-model \
 && if [ "$BAKE_MODEL" = 1 ]; then \
      node dist/scripts/fetch-model.js --out "/var/cache/kokoro-model/$KOKORO_DTYPE" --dtype "$KOKORO_DTYPE" \
      && cp -a "/var/cache/kokoro-model/$KOKORO_DTYPE/." /opt/kokoro-model/; \
    fi

# ---- gpu target ---------------------------------------------------------------------------------
# Not built by `npm run image:test` (a CUDA base image and the NuGet download); its guard is the
# check-cuda-deps.sh step below, which fails the build when a provider library cannot load.
FROM --platform=linux/amd64 ${CUDA_IMAGE} AS gpu
ARG KOKORO_DTYPE=fp32
# Node's binary links libatomic.so.1, which Ubuntu's base does not carry.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libatomic1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=node /usr/local/bin/node /usr/local/bin/node
RUN node --version
COPY --from=ffmpeg /usr/local/bin/ffmpeg /usr/local/bin/ffmpeg
COPY --from=ffmpeg /usr/local/share/doc/ffmpeg /usr/local/share/doc/ffmpeg
WORKDIR /opt/program
COPY --from=manifest /opt/program/package.json ./
COPY --from=prod-gpu /opt/program/node_modules ./node_modules
COPY --from=compile /opt/program/dist ./dist
# The browser page's static files: off here (WEB_PAGE=false below, and SageMaker routes no `/`);
# `-e WEB_PAGE=true` turns it on for a local run.
COPY web ./web
COPY --chmod=0755 docker/entrypoint.sh docker/check-cuda-deps.sh ./docker/
# The proof that CUDA can load: every provider library's dependencies resolve against this image's
# CUDA and cuDNN (the build fails otherwise), and the build log shows their versions.
RUN sh docker/check-cuda-deps.sh node_modules/onnxruntime-node/bin/napi-v6/linux/x64
COPY --from=model /opt/kokoro-model /opt/kokoro-model
# cuda, not auto: on a GPU endpoint a CUDA failure should fail the deployment with its reason in the
# log, not leave a healthy-looking endpoint running on CPU. `-e KOKORO_DEVICE=auto` to allow CPU.
# MALLOC_MMAP_THRESHOLD_: glibc gives freed blocks of 1 MB and more back to the kernel (the server
# would re-execute itself to set it otherwise; see server/allocator.ts).
# METRICS_EMF: per-instance metrics as EMF log lines, which CloudWatch Logs turns into metrics from
# the endpoint's log group (no agent, no extra permission); the deploy tooling sets their dimensions.
ENV KOKORO_DEVICE=cuda \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model \
    WEB_PAGE=false \
    METRICS_EMF=true \
    MALLOC_MMAP_THRESHOLD_=1048576
LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true
EXPOSE 8080
# Runs as root, as SageMaker expects. Exec form: the entrypoint execs Node, which gets SIGTERM.
ENTRYPOINT ["/opt/program/docker/entrypoint.sh"]
CMD ["serve"]

# ---- cpu target (last, so a plain `docker build .` gives the image that runs anywhere) ----------
FROM node AS cpu
ARG KOKORO_DTYPE=fp32
COPY --from=ffmpeg /usr/local/bin/ffmpeg /usr/local/bin/ffmpeg
COPY --from=ffmpeg /usr/local/share/doc/ffmpeg /usr/local/share/doc/ffmpeg
WORKDIR /opt/program
COPY --from=manifest /opt/program/package.json ./
COPY --from=prod-cpu /opt/program/node_modules ./node_modules
COPY --from=compile /opt/program/dist ./dist
COPY web ./web
COPY --chmod=0755 docker/entrypoint.sh ./docker/
COPY --from=model /opt/kokoro-model /opt/kokoro-model
ENV KOKORO_DEVICE=cpu \
    KOKORO_DTYPE=${KOKORO_DTYPE} \
    KOKORO_MODEL_DIR=/opt/ml/model \
    KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model \
    WEB_PAGE=false \
    METRICS_EMF=true \
    MALLOC_MMAP_THRESHOLD_=1048576
LABEL com.amazonaws.sagemaker.capabilities.bidirectional-streaming=true \
      com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true
EXPOSE 8080
ENTRYPOINT ["/opt/program/docker/entrypoint.sh"]
CMD ["serve"]
