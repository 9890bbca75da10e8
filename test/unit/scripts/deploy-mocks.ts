/**
 * What the deploy tests share: the mocked SageMaker, Application Auto Scaling and CloudWatch clients
 * (mocked here once for every deploy test file), the options and plan they deploy, a fake clock,
 * and output captured from `main`.
 */
import { ApplicationAutoScalingClient } from '@aws-sdk/client-application-auto-scaling';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { SageMakerClient, SageMakerServiceException } from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, expect } from 'vitest';
import {
  GPU_AMI_VERSION,
  main,
  parseCli,
  type ApiCall,
  type AwsClients,
  type DeployOptions,
  type ParsedCli,
  type RunIo,
  type ScalingPlan,
} from '../../../scripts/deploy.ts';

export const sagemaker = mockClient(SageMakerClient);
export const autoscaling = mockClient(ApplicationAutoScalingClient);
export const cloudwatch = mockClient(CloudWatchClient);
export const clients = (): AwsClients => ({
  sagemaker: new SageMakerClient({ region: 'us-east-1' }),
  autoscaling: new ApplicationAutoScalingClient({ region: 'us-east-1' }),
  cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
});
export const allCalls = () => [...sagemaker.calls(), ...autoscaling.calls(), ...cloudwatch.calls()];

export const ROLE = 'arn:aws:iam::123456789012:role/SageMakerRole';
export const IMAGE = '123456789012.dkr.ecr.us-east-1.amazonaws.com/kokoro-tts:gpu';
export const TOPIC = 'arn:aws:sns:us-east-1:123456789012:kokoro-alarms';
export const STEP_ARN =
  'arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1f2e:resource/sagemaker/endpoint/kokoro/variant/AllTraffic:policyName/kokoro-step-scale-in';
export const FLAGS = [
  '--name',
  'kokoro',
  '--image',
  IMAGE,
  '--role',
  ROLE,
  '--model-s3',
  's3://models/kokoro-82m',
];

export const OPTIONS: DeployOptions = {
  name: 'kokoro',
  image: IMAGE,
  role: ROLE,
  modelS3: 's3://models/kokoro-82m/',
  instanceType: 'ml.g5.xlarge',
  instanceCount: 1,
  env: { KOKORO_DTYPE: 'fp16' },
  amiVersion: GPU_AMI_VERSION,
  startupTimeoutS: 600,
  downloadTimeoutS: 600,
  autoscaling: undefined,
};

/** The plan of the brief, as `npm run plan` writes it. */
export const PLAN: ScalingPlan = {
  version: 1,
  kind: 'plan',
  transport: 'ws',
  slo_ms: 3000,
  q_max: 6,
  t_total_s: 420,
  target_per_instance: 4,
  scale_in_threshold: 2,
  min_instances: 3,
  max_instances: 50,
  scale_out_cooldown_s: 60,
  scale_in_cooldown_s: 900,
  scale_in_period_s: 60,
  scale_in_evaluation_periods: 15,
  admission: { MAX_SESSIONS: '6', MAX_QUEUED_JOBS: '18', MAX_HTTP_STREAMS: '6' },
};

export const SCALED: DeployOptions = {
  ...OPTIONS,
  instanceCount: 3,
  autoscaling: { plan: PLAN, metricsNamespace: 'KokoroTTS', alarmTopic: TOPIC },
};

/** Plan files by name, for parseCli and main; anything else is missing. */
export function files(contents: Record<string, unknown>): (path: string) => string {
  return (path) => {
    if (!Object.hasOwn(contents, path)) {
      throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    }
    const content = contents[path];
    return typeof content === 'string' ? content : JSON.stringify(content);
  };
}
export const READ_PLAN = files({ 'plan.json': PLAN });

/** A fake clock advanced by `sleep`, and the lines printed. */
export function fakeIo(pollMs = 15_000): RunIo & { lines: string[] } {
  let t = 0;
  const lines: string[] = [];
  return {
    lines,
    log: (line) => lines.push(line),
    now: () => t,
    sleep: async (ms) => {
      t += ms;
    },
    pollMs,
  };
}

export function notFound(message: string): SageMakerServiceException {
  return new SageMakerServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message,
  });
}

export function capture(): Writable & { text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      done();
    },
  });
  return Object.assign(stream, { text: () => Buffer.concat(chunks).toString('utf8') });
}

/** The mocked clients, wrapped to record every call across the three services in order. */
export function recordingClients(): { clients: AwsClients; calls: ApiCall[] } {
  const calls: ApiCall[] = [];
  const real = clients();
  const wrap = <C extends { send: unknown }>(service: ApiCall['service'], client: C): C =>
    ({
      send: (command: { input: object }) => {
        calls.push({
          service,
          operation: command.constructor.name.replace(/Command$/, ''),
          input: command.input,
        });
        return (client.send as (command: unknown) => Promise<unknown>).call(client, command);
      },
    }) as unknown as C;
  return {
    calls,
    clients: {
      sagemaker: wrap('sagemaker', real.sagemaker),
      autoscaling: wrap('application-autoscaling', real.autoscaling),
      cloudwatch: wrap('cloudwatch', real.cloudwatch),
    },
  };
}

/** parseCli for a deploy command line; throws for anything else. */
export function deployCli(argv: string[]): Extract<ParsedCli, { command: 'deploy' }> {
  const cli = parseCli(['deploy', ...FLAGS, ...argv], {}, READ_PLAN);
  if (cli.help || cli.command !== 'deploy') throw new Error('expected deploy');
  return cli;
}

/** Runs `main` with --dry-run; returns the JSON lines it printed, parsed. */
export async function dryRun(argv: string[]): Promise<{ code: number; calls: ApiCall[]; stderr: string }> {
  const stdout = capture();
  const stderr = capture();
  const code = await main([...argv, '--dry-run'], { env: {}, stdout, stderr, readText: READ_PLAN });
  const lines = stdout.text().split('\n');
  expect(lines.pop()).toBe('');
  return { code, calls: lines.map((line) => JSON.parse(line) as ApiCall), stderr: stderr.text() };
}

export const SCALABLE = {
  ServiceNamespace: 'sagemaker',
  ResourceId: 'endpoint/kokoro/variant/AllTraffic',
  ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
};
export const DIMENSIONS = [
  { Name: 'EndpointName', Value: 'kokoro' },
  { Name: 'VariantName', Value: 'AllTraffic' },
];

/** Every test of the calling file starts and ends with mocks that answer nothing and recorded nothing. */
export function resetMocksAroundEach(): void {
  beforeEach(() => {
    sagemaker.reset();
    autoscaling.reset();
    cloudwatch.reset();
  });
  afterEach(() => {
    sagemaker.reset();
    autoscaling.reset();
    cloudwatch.reset();
  });
}
