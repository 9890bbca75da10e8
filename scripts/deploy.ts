/**
 * Deploys the image as an Amazon SageMaker real-time endpoint, and removes it again.
 *
 *   npm run deploy -- deploy --name kokoro --image ACCOUNT.dkr.ecr.REGION.amazonaws.com/kokoro-tts:gpu \
 *     --role arn:aws:iam::ACCOUNT:role/ROLE --model-s3 s3://BUCKET/kokoro-82m/ [--env KOKORO_DTYPE=fp16]
 *   npm run deploy -- destroy --name kokoro
 *
 * `deploy` creates the model (`NAME-model`), the endpoint configuration (`NAME-config`) and the
 * endpoint (`NAME`), then polls until the endpoint is InService. `destroy` deletes them in reverse
 * order. `--dry-run` prints every request as JSON and calls nothing. The pure parts are exported for
 * the tests; the command line only runs when this file is the entry point.
 */
import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteModelCommand,
  DescribeEndpointCommand,
  SageMakerClient,
  type CreateEndpointCommandInput,
  type CreateEndpointConfigCommandInput,
  type CreateModelCommandInput,
  type DeleteEndpointCommandInput,
  type DeleteEndpointConfigCommandInput,
  type DeleteModelCommandInput,
  type ModelDataSource,
  type ProductionVariantInferenceAmiVersion,
  type ProductionVariantInstanceType,
} from '@aws-sdk/client-sagemaker';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { intFlag, isMain, UsageError } from './lib/cli.ts';
export { UsageError };

export const DEFAULT_INSTANCE_TYPE = 'ml.g5.xlarge';
/**
 * SageMaker's GPU host images (`InferenceAmiVersion`) with the NVIDIA driver and the newest CUDA it
 * runs, as the ProductionVariant API reference lists them. SageMaker's default host for ml.g5 has
 * driver 470 (CUDA 11.4), too old for the image.
 */
export const GPU_AMIS = {
  'al2-ami-sagemaker-inference-gpu-2': { driver: '535', cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-2-1': { driver: '535', cuda: '12.2' },
  'al2-ami-sagemaker-inference-gpu-3-1': { driver: '550', cuda: '12.4' },
  'al2023-ami-sagemaker-inference-gpu-4-1': { driver: '580', cuda: '13.0' },
} as const satisfies Record<string, { driver: string; cuda: string }>;

/**
 * Host image for GPU instances: driver 580, which runs the image's CUDA 13.0 (onnxruntime-node 1.30's
 * CUDA provider is a CUDA 13 build; CUDA 13 needs driver 580 or newer).
 */
export const GPU_AMI_VERSION: keyof typeof GPU_AMIS = 'al2023-ami-sagemaker-inference-gpu-4-1';
/** Time SageMaker gives the container to answer GET /ping with 200 (model load and warm-up). */
export const DEFAULT_STARTUP_TIMEOUT_S = 600;
/** Time SageMaker gives itself to copy the model data from S3 onto the instance. */
export const DEFAULT_DOWNLOAD_TIMEOUT_S = 600;
export const DEFAULT_POLL_MS = 15_000;
export const DEFAULT_WAIT_TIMEOUT_MS = 60 * 60_000;
const VARIANT_NAME = 'AllTraffic';
/** SageMaker resource names: letters, digits and hyphens, at most 63 characters. */
const NAME_PATTERN = /^[a-zA-Z0-9](-*[a-zA-Z0-9])*$/;
const LONGEST_SUFFIX = '-config';

export interface DeployOptions {
  /** Base name: the endpoint is called this; the model and configuration get suffixes. */
  readonly name: string;
  /** ECR image URI. */
  readonly image: string;
  /** IAM role SageMaker assumes to pull the image and read the model data. */
  readonly role: string;
  /** An S3 prefix holding the model directory (uncompressed), or an `s3://….tar.gz` object. */
  readonly modelS3: string;
  readonly instanceType: string;
  readonly instanceCount: number;
  /** Environment of the container (KOKORO_DTYPE, KOKORO_DEVICE, …). */
  readonly env: Readonly<Record<string, string>>;
  /** InferenceAmiVersion of the variant; undefined leaves SageMaker's default. */
  readonly amiVersion: string | undefined;
  readonly startupTimeoutS: number;
  readonly downloadTimeoutS: number;
}

export interface ResourceNames {
  readonly model: string;
  readonly endpointConfig: string;
  readonly endpoint: string;
}

/** The endpoint failed, or did not come up in time. */
export class DeployError extends Error {
  override readonly name = 'DeployError';
}

export function resourceNames(name: string): ResourceNames {
  return { model: `${name}-model`, endpointConfig: `${name}-config`, endpoint: name };
}

/** True for instance families with NVIDIA GPUs (ml.g4dn, ml.g5, ml.g6, ml.p3, ml.p4d, ml.p5, …). */
export function isGpuInstance(instanceType: string): boolean {
  return /^ml\.[gp]\d/.test(instanceType);
}

/**
 * Where the model data comes from. A prefix is copied as it is into /opt/ml/model (no archive to
 * build or unpack); a `.tar.gz` object is unpacked there by SageMaker.
 */
export function modelDataSource(uri: string): ModelDataSource {
  if (/\.(tar\.gz|tgz)$/.test(uri)) {
    return { S3DataSource: { S3Uri: uri, S3DataType: 'S3Object', CompressionType: 'Gzip' } };
  }
  // SageMaker wants a prefix that ends with a slash for uncompressed model data.
  const prefix = uri.endsWith('/') ? uri : `${uri}/`;
  return { S3DataSource: { S3Uri: prefix, S3DataType: 'S3Prefix', CompressionType: 'None' } };
}

export interface DeployRequests {
  readonly model: CreateModelCommandInput;
  readonly endpointConfig: CreateEndpointConfigCommandInput;
  readonly endpoint: CreateEndpointCommandInput;
}

export function deployRequests(options: DeployOptions): DeployRequests {
  const names = resourceNames(options.name);
  return {
    model: {
      ModelName: names.model,
      ExecutionRoleArn: options.role,
      PrimaryContainer: {
        Image: options.image,
        ModelDataSource: modelDataSource(options.modelS3),
        Environment: { ...options.env },
      },
    },
    endpointConfig: {
      EndpointConfigName: names.endpointConfig,
      ProductionVariants: [
        {
          VariantName: VARIANT_NAME,
          ModelName: names.model,
          InstanceType: options.instanceType as ProductionVariantInstanceType,
          InitialInstanceCount: options.instanceCount,
          InitialVariantWeight: 1,
          ContainerStartupHealthCheckTimeoutInSeconds: options.startupTimeoutS,
          ModelDataDownloadTimeoutInSeconds: options.downloadTimeoutS,
          ...(options.amiVersion === undefined
            ? {}
            : { InferenceAmiVersion: options.amiVersion as ProductionVariantInferenceAmiVersion }),
        },
      ],
    },
    endpoint: { EndpointName: names.endpoint, EndpointConfigName: names.endpointConfig },
  };
}

export interface DestroyRequests {
  readonly endpoint: DeleteEndpointCommandInput;
  readonly endpointConfig: DeleteEndpointConfigCommandInput;
  readonly model: DeleteModelCommandInput;
}

export function destroyRequests(name: string): DestroyRequests {
  const names = resourceNames(name);
  return {
    endpoint: { EndpointName: names.endpoint },
    endpointConfig: { EndpointConfigName: names.endpointConfig },
    model: { ModelName: names.model },
  };
}

/**
 * SageMaker answers a Describe/Delete of a missing resource with a ValidationException saying
 * "Could not find …" (some APIs use ResourceNotFound).
 */
export function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error.name === 'ResourceNotFound' || error.name === 'ResourceNotFoundException') return true;
  return error.name === 'ValidationException' && /could not find|does not exist/i.test(error.message);
}

/** The parts of the client the commands use: `send`, so tests can mock it. */
export type SageMaker = Pick<SageMakerClient, 'send'>;

export interface RunIo {
  /** Progress and results, one line per call (no newline). */
  log(line: string): void;
  /** Redraws a status line in place on a terminal; falls back to `log`. */
  status?(line: string): void;
  sleep?(ms: number): Promise<void>;
  now?(): number;
  pollMs?: number;
  waitTimeoutMs?: number;
}

export function formatElapsed(ms: number): string {
  const total = Math.floor(ms / 1000);
  const minutes = Math.floor(total / 60);
  const seconds = total % 60;
  return minutes > 0 ? `${minutes}m${String(seconds).padStart(2, '0')}s` : `${seconds}s`;
}

/**
 * Polls DescribeEndpoint until the endpoint is InService, printing its status and the time elapsed.
 * A Failed endpoint throws with SageMaker's FailureReason.
 */
export async function waitForEndpoint(client: SageMaker, endpointName: string, io: RunIo): Promise<void> {
  const now = io.now ?? Date.now;
  const sleep = io.sleep ?? ((ms: number) => delay(ms));
  const pollMs = io.pollMs ?? DEFAULT_POLL_MS;
  const timeoutMs = io.waitTimeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  const status = io.status ?? io.log;
  const start = now();
  for (;;) {
    const elapsed = now() - start;
    let state: string;
    let reason: string | undefined;
    try {
      const described = await client.send(new DescribeEndpointCommand({ EndpointName: endpointName }));
      state = described.EndpointStatus ?? 'Unknown';
      reason = described.FailureReason;
    } catch (error) {
      // Right after CreateEndpoint, Describe can briefly say the endpoint does not exist yet.
      if (!isNotFound(error) || elapsed > 60_000) throw error;
      state = 'Pending';
    }
    status(`endpoint ${endpointName}: ${state} (${formatElapsed(elapsed)})`);
    if (state === 'InService') return;
    if (state === 'Failed' || state === 'OutOfService' || state === 'Deleting') {
      throw new DeployError(
        `Endpoint ${endpointName} is ${state}: ${reason ?? 'no reason given'}. ` +
          `The container's log is in CloudWatch, log group /aws/sagemaker/Endpoints/${endpointName}.`,
      );
    }
    if (elapsed >= timeoutMs) {
      throw new DeployError(
        `Endpoint ${endpointName} is still ${state} after ${formatElapsed(elapsed)}; stopped waiting (it may still come up).`,
      );
    }
    await sleep(pollMs);
  }
}

/** Creates the model, the endpoint configuration and the endpoint; waits unless `wait` is false. */
export async function deploy(
  client: SageMaker,
  options: DeployOptions,
  io: RunIo,
  wait = true,
): Promise<void> {
  const requests = deployRequests(options);
  const names = resourceNames(options.name);
  const hint = (error: unknown) => {
    if (error instanceof Error && /already exist/i.test(error.message)) {
      error.message += ` (run \`npm run deploy -- destroy --name ${options.name}\` first)`;
    }
    return error;
  };
  try {
    await client.send(new CreateModelCommand(requests.model));
    io.log(`created model ${names.model}`);
    await client.send(new CreateEndpointConfigCommand(requests.endpointConfig));
    io.log(`created endpoint configuration ${names.endpointConfig}`);
    await client.send(new CreateEndpointCommand(requests.endpoint));
    io.log(`creating endpoint ${names.endpoint} (${options.instanceCount} × ${options.instanceType})`);
  } catch (error) {
    throw hint(error);
  }
  if (!wait) return;
  await waitForEndpoint(client, names.endpoint, io);
  io.log(`endpoint ${names.endpoint} is InService`);
}

/** Deletes the endpoint, its configuration and the model, in that order; missing ones are skipped. */
export async function destroy(client: SageMaker, name: string, io: RunIo): Promise<void> {
  const requests = destroyRequests(name);
  const names = resourceNames(name);
  const steps: [string, () => Promise<unknown>][] = [
    [`endpoint ${names.endpoint}`, () => client.send(new DeleteEndpointCommand(requests.endpoint))],
    [
      `endpoint configuration ${names.endpointConfig}`,
      () => client.send(new DeleteEndpointConfigCommand(requests.endpointConfig)),
    ],
    [`model ${names.model}`, () => client.send(new DeleteModelCommand(requests.model))],
  ];
  for (const [what, run] of steps) {
    try {
      await run();
      io.log(`deleted ${what}`);
    } catch (error) {
      if (!isNotFound(error)) throw error;
      io.log(`${what} does not exist; skipped`);
    }
  }
}

/** The requests a command would send, in order, for `--dry-run`. */
export function plannedRequests(
  cli: Extract<ParsedCli, { help: false }>,
): { operation: string; input: object }[] {
  if (cli.command === 'destroy') {
    const r = destroyRequests(cli.name);
    return [
      { operation: 'DeleteEndpoint', input: r.endpoint },
      { operation: 'DeleteEndpointConfig', input: r.endpointConfig },
      { operation: 'DeleteModel', input: r.model },
    ];
  }
  const r = deployRequests(cli.options);
  return [
    { operation: 'CreateModel', input: r.model },
    { operation: 'CreateEndpointConfig', input: r.endpointConfig },
    { operation: 'CreateEndpoint', input: r.endpoint },
  ];
}

export type ParsedCli =
  | { help: true }
  | {
      help: false;
      command: 'deploy';
      name: string;
      options: DeployOptions;
      region: string | undefined;
      dryRun: boolean;
      wait: boolean;
    }
  | { help: false; command: 'destroy'; name: string; region: string | undefined; dryRun: boolean };

/**
 * Parses `deploy|destroy [flags]`. The region defaults to AWS_REGION, then AWS_DEFAULT_REGION.
 *
 * @throws {UsageError} for unknown commands or flags, missing or malformed values.
 */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ParsedCli {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        image: { type: 'string' },
        role: { type: 'string' },
        'model-s3': { type: 'string' },
        'instance-type': { type: 'string' },
        'instance-count': { type: 'string' },
        region: { type: 'string' },
        env: { type: 'string', multiple: true },
        'ami-version': { type: 'string' },
        'startup-timeout': { type: 'string' },
        'download-timeout': { type: 'string' },
        'no-wait': { type: 'boolean' },
        'dry-run': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help === true) return { help: true };
  const [command, ...extra] = positionals;
  if (command !== 'deploy' && command !== 'destroy') {
    throw new UsageError(
      command === undefined ? 'Name a command: deploy or destroy.' : `Unknown command "${command}".`,
    );
  }
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}".`);

  const name = values.name;
  if (name === undefined) throw new UsageError('--name is required.');
  const maxName = 63 - LONGEST_SUFFIX.length;
  if (!NAME_PATTERN.test(name) || name.length > maxName) {
    throw new UsageError(
      `--name "${name}" should be letters, digits and hyphens (not first or last), at most ${maxName} characters.`,
    );
  }
  const region = values.region ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined);
  const dryRun = values['dry-run'] === true;
  if (command === 'destroy') return { help: false, command, name, region, dryRun };

  const required = (flag: 'image' | 'role' | 'model-s3'): string => {
    const value = values[flag];
    if (value === undefined || value.trim() === '') throw new UsageError(`--${flag} is required for deploy.`);
    return value.trim();
  };
  const image = required('image');
  const role = required('role');
  if (!/^arn:aws[a-z-]*:iam::\d{12}:role\/\S+$/.test(role)) {
    throw new UsageError(
      `--role should be an IAM role ARN (arn:aws:iam::123456789012:role/NAME); got "${role}".`,
    );
  }
  const modelS3 = required('model-s3');
  if (!/^s3:\/\/[^/]+\/\S+$/.test(modelS3)) {
    throw new UsageError(
      `--model-s3 should be s3://BUCKET/PREFIX/ (or s3://BUCKET/KEY.tar.gz); got "${modelS3}".`,
    );
  }
  const instanceType = values['instance-type'] ?? DEFAULT_INSTANCE_TYPE;
  if (!/^ml\.[a-z0-9-]+\.[a-z0-9]+$/.test(instanceType)) {
    throw new UsageError(`--instance-type should look like ml.g5.xlarge; got "${instanceType}".`);
  }
  const environment: Record<string, string> = {};
  for (const pair of values.env ?? []) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match) throw new UsageError(`--env should be KEY=VALUE; got "${pair}".`);
    environment[match[1]!] = match[2]!;
  }
  const ami = values['ami-version'];
  const amiVersion =
    ami === 'none' ? undefined : (ami ?? (isGpuInstance(instanceType) ? GPU_AMI_VERSION : undefined));
  return {
    help: false,
    command,
    name,
    region,
    dryRun,
    wait: values['no-wait'] !== true,
    options: {
      name,
      image,
      role,
      modelS3,
      instanceType,
      instanceCount: intFlag('instance-count', values['instance-count'], 1, 1, 100),
      env: environment,
      amiVersion,
      startupTimeoutS: intFlag(
        'startup-timeout',
        values['startup-timeout'],
        DEFAULT_STARTUP_TIMEOUT_S,
        1,
        3600,
      ),
      downloadTimeoutS: intFlag(
        'download-timeout',
        values['download-timeout'],
        DEFAULT_DOWNLOAD_TIMEOUT_S,
        1,
        3600,
      ),
    },
  };
}

export function helpText(): string {
  return `Deploy the image as a SageMaker real-time endpoint, or remove it.

Usage:
  npm run deploy -- deploy  --name NAME --image URI --role ARN --model-s3 S3URI [options]
  npm run deploy -- destroy --name NAME [--region REGION] [--dry-run]

deploy creates model NAME-model, endpoint configuration NAME-config and endpoint NAME, then waits
until the endpoint is InService. destroy deletes the three (missing ones are skipped).

Options:
  --name NAME             Endpoint name (letters, digits, hyphens; at most ${63 - LONGEST_SUFFIX.length} characters)
  --image URI             ECR image URI (the gpu target for GPU instances)
  --role ARN              IAM execution role SageMaker assumes (ECR pull, S3 read)
  --model-s3 S3URI        s3://BUCKET/PREFIX/ holding the model directory (copied uncompressed to
                          /opt/ml/model), or s3://BUCKET/KEY.tar.gz (unpacked there by SageMaker)
  --instance-type TYPE    Default ${DEFAULT_INSTANCE_TYPE}
  --instance-count N      Default 1
  --env KEY=VALUE         Container environment, repeatable (KOKORO_DTYPE=fp16, KOKORO_WORKERS=2, ...)
  --ami-version VERSION   InferenceAmiVersion; default ${GPU_AMI_VERSION} on GPU instances
                          (NVIDIA driver ${GPU_AMIS[GPU_AMI_VERSION].driver}, CUDA ${GPU_AMIS[GPU_AMI_VERSION].cuda}); "none" keeps SageMaker's default
  --startup-timeout S     Seconds for the container to answer /ping with 200 (default ${DEFAULT_STARTUP_TIMEOUT_S})
  --download-timeout S    Seconds for copying the model data (default ${DEFAULT_DOWNLOAD_TIMEOUT_S})
  --region REGION         Default $AWS_REGION, then $AWS_DEFAULT_REGION
  --no-wait               Return once CreateEndpoint is accepted
  --dry-run               Print every request as JSON; call nothing
  -h, --help              Show this help
`;
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  /** Makes the client; replaced by the tests. */
  createClient?: (region: string | undefined) => SageMaker;
  run?: Omit<RunIo, 'log' | 'status'>;
}

/** Runs the CLI; returns the exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let cli: ParsedCli;
  try {
    cli = parseCli(argv, io.env);
  } catch (error) {
    io.stderr.write(`deploy: ${(error as Error).message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (cli.help) {
    io.stdout.write(helpText());
    return 0;
  }
  if (cli.dryRun) {
    for (const { operation, input } of plannedRequests(cli)) {
      io.stdout.write(`# ${operation}\n${JSON.stringify(input, null, 2)}\n`);
    }
    if (cli.command === 'deploy' && cli.wait) {
      io.stdout.write(`# then DescribeEndpoint every ${DEFAULT_POLL_MS / 1000} s until InService\n`);
    }
    return 0;
  }
  if (cli.region === undefined && io.createClient === undefined) {
    io.stderr.write('deploy: no region: pass --region or set AWS_REGION.\n');
    return 2;
  }
  const client = io.createClient
    ? io.createClient(cli.region)
    : new SageMakerClient(cli.region === undefined ? {} : { region: cli.region });
  let redrawn = false;
  const runIo: RunIo = {
    ...io.run,
    log: (line) => {
      if (redrawn) io.stdout.write('\n');
      redrawn = false;
      io.stdout.write(`${line}\n`);
    },
    ...(io.stdout.isTTY === true
      ? {
          status: (line: string) => {
            io.stdout.write(`\r${line}\x1b[K`);
            redrawn = true;
          },
        }
      : {}),
  };
  try {
    if (cli.command === 'deploy') await deploy(client, cli.options, runIo, cli.wait);
    else await destroy(client, cli.name, runIo);
    return 0;
  } catch (error) {
    if (redrawn) io.stdout.write('\n');
    io.stderr.write(`deploy: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (isMain(import.meta.url)) {
  process.exitCode = await main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
  });
}
