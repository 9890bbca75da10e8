/** What the image test requires of the built image's configuration and contents (pure). */

/** The part of `docker|podman image inspect` that the checks read (both engines share it). */
export interface ImageInspect {
  readonly Id?: string;
  readonly Size?: number;
  readonly Architecture?: string;
  readonly Config?: {
    readonly Labels?: Record<string, string> | null;
    readonly Entrypoint?: string[] | null;
    readonly Cmd?: string[] | null;
    readonly ExposedPorts?: Record<string, unknown> | null;
    readonly Env?: string[] | null;
    readonly User?: string;
  };
}

/** The SageMaker container contract and the cpu target's settings. */
export const EXPECTED = {
  labels: {
    'com.amazonaws.sagemaker.capabilities.bidirectional-streaming': 'true',
    'com.amazonaws.sagemaker.capabilities.accept-bind-to-port': 'true',
  },
  entrypoint: ['/opt/program/docker/entrypoint.sh'],
  cmd: ['serve'],
  port: '8080/tcp',
  env: [
    'KOKORO_DEVICE=cpu',
    'KOKORO_MODEL_DIR=/opt/ml/model',
    'KOKORO_BAKED_MODEL_DIR=/opt/kokoro-model',
    'WEB_PAGE=false',
  ],
  architecture: 'amd64',
} as const;

const same = (a: readonly string[] | null | undefined, b: readonly string[]) =>
  JSON.stringify(a ?? []) === JSON.stringify(b);

/** Every way `image` differs from {@link EXPECTED}; empty when it conforms. */
export function imageConfigProblems(image: ImageInspect): string[] {
  const problems: string[] = [];
  const config = image.Config ?? {};
  for (const [label, value] of Object.entries(EXPECTED.labels)) {
    const got = config.Labels?.[label];
    if (got !== value) problems.push(`label ${label} should be ${value}, is ${got ?? 'missing'}`);
  }
  if (!same(config.Entrypoint, EXPECTED.entrypoint)) {
    problems.push(
      `entrypoint should be ${JSON.stringify(EXPECTED.entrypoint)}, is ${JSON.stringify(config.Entrypoint ?? [])}`,
    );
  }
  if (!same(config.Cmd, EXPECTED.cmd)) {
    problems.push(`cmd should be ${JSON.stringify(EXPECTED.cmd)}, is ${JSON.stringify(config.Cmd ?? [])}`);
  }
  if (!Object.keys(config.ExposedPorts ?? {}).includes(EXPECTED.port)) {
    problems.push(
      `should expose ${EXPECTED.port}, exposes ${Object.keys(config.ExposedPorts ?? {}).join(', ') || 'nothing'}`,
    );
  }
  for (const variable of EXPECTED.env) {
    if (!(config.Env ?? []).includes(variable)) problems.push(`environment should set ${variable}`);
  }
  // SageMaker runs containers as root.
  if (config.User && config.User !== 'root' && config.User !== '0') {
    problems.push(`should run as root, runs as ${config.User}`);
  }
  if (image.Architecture !== undefined && image.Architecture !== EXPECTED.architecture) {
    problems.push(`architecture should be ${EXPECTED.architecture}, is ${image.Architecture}`);
  }
  return problems;
}

/** The root devDependencies found among the package folders listed from the image's node_modules. */
export function devDependenciesIn(
  installed: readonly string[],
  devDependencies: readonly string[],
): string[] {
  const present = new Set(installed.map((line) => line.trim()).filter(Boolean));
  return devDependencies.filter((name) => present.has(name));
}

/** Bytes as decimal megabytes, as `docker images` shows them: 584.7 MB. */
export function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
