/**
 * scripts/deploy.ts against mocked SageMaker, Application Auto Scaling and CloudWatch clients: the
 * exact requests, their order, waiting, the plan file's checks, --dry-run, and removal.
 */
import {
  ApplicationAutoScalingClient,
  DeleteScalingPolicyCommand,
  DeregisterScalableTargetCommand,
  ObjectNotFoundException,
  PutScalingPolicyCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import {
  CloudWatchClient,
  DeleteAlarmsCommand,
  PutMetricAlarmCommand,
  ResourceNotFound,
} from '@aws-sdk/client-cloudwatch';
import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteModelCommand,
  DescribeEndpointCommand,
  SageMakerClient,
  SageMakerServiceException,
} from '@aws-sdk/client-sagemaker';
import { mockClient } from 'aws-sdk-client-mock';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DeployError,
  GPU_AMI_VERSION,
  UsageError,
  autoscalingRequests,
  deploy,
  deployRequests,
  destroy,
  isNotFound,
  main,
  parseCli,
  parsePlan,
  plannedRequests,
  waitForEndpoint,
  type ApiCall,
  type AwsClients,
  type DeployOptions,
  type ParsedCli,
  type RunIo,
  type ScalingPlan,
} from '../../scripts/deploy.ts';

const sagemaker = mockClient(SageMakerClient);
const autoscaling = mockClient(ApplicationAutoScalingClient);
const cloudwatch = mockClient(CloudWatchClient);
const clients = (): AwsClients => ({
  sagemaker: new SageMakerClient({ region: 'us-east-1' }),
  autoscaling: new ApplicationAutoScalingClient({ region: 'us-east-1' }),
  cloudwatch: new CloudWatchClient({ region: 'us-east-1' }),
});
const allCalls = () => [...sagemaker.calls(), ...autoscaling.calls(), ...cloudwatch.calls()];

const ROLE = 'arn:aws:iam::123456789012:role/SageMakerRole';
const IMAGE = '123456789012.dkr.ecr.us-east-1.amazonaws.com/kokoro-tts:gpu';
const TOPIC = 'arn:aws:sns:us-east-1:123456789012:kokoro-alarms';
const STEP_ARN =
  'arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:1f2e:resource/sagemaker/endpoint/kokoro/variant/AllTraffic:policyName/kokoro-step-scale-in';
const FLAGS = ['--name', 'kokoro', '--image', IMAGE, '--role', ROLE, '--model-s3', 's3://models/kokoro-82m'];

const OPTIONS: DeployOptions = {
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
const PLAN: ScalingPlan = {
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

const SCALED: DeployOptions = {
  ...OPTIONS,
  instanceCount: 3,
  autoscaling: { plan: PLAN, metricsNamespace: 'KokoroTTS', alarmTopic: TOPIC },
};

/** Plan files by name, for parseCli and main; anything else is missing. */
function files(contents: Record<string, unknown>): (path: string) => string {
  return (path) => {
    if (!Object.hasOwn(contents, path)) {
      throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    }
    const content = contents[path];
    return typeof content === 'string' ? content : JSON.stringify(content);
  };
}
const READ_PLAN = files({ 'plan.json': PLAN });

/** A fake clock advanced by `sleep`, and the lines printed. */
function fakeIo(pollMs = 15_000): RunIo & { lines: string[] } {
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

function notFound(message: string): SageMakerServiceException {
  return new SageMakerServiceException({
    name: 'ValidationException',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message,
  });
}

function capture(): Writable & { text: () => string } {
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
function recordingClients(): { clients: AwsClients; calls: ApiCall[] } {
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
function deployCli(argv: string[]): Extract<ParsedCli, { command: 'deploy' }> {
  const cli = parseCli(['deploy', ...FLAGS, ...argv], {}, READ_PLAN);
  if (cli.help || cli.command !== 'deploy') throw new Error('expected deploy');
  return cli;
}

/** Runs `main` with --dry-run; returns the JSON lines it printed, parsed. */
async function dryRun(argv: string[]): Promise<{ code: number; calls: ApiCall[]; stderr: string }> {
  const stdout = capture();
  const stderr = capture();
  const code = await main([...argv, '--dry-run'], { env: {}, stdout, stderr, readText: READ_PLAN });
  const lines = stdout.text().split('\n');
  expect(lines.pop()).toBe('');
  return { code, calls: lines.map((line) => JSON.parse(line) as ApiCall), stderr: stderr.text() };
}

const SCALABLE = {
  ServiceNamespace: 'sagemaker',
  ResourceId: 'endpoint/kokoro/variant/AllTraffic',
  ScalableDimension: 'sagemaker:variant:DesiredInstanceCount',
};
const DIMENSIONS = [
  { Name: 'EndpointName', Value: 'kokoro' },
  { Name: 'VariantName', Value: 'AllTraffic' },
];

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

describe('deploy', () => {
  it('sends exactly the model, endpoint configuration and endpoint requests, in that order', async () => {
    sagemaker.on(DescribeEndpointCommand).resolves({ EndpointStatus: 'InService' });
    await deploy(clients(), OPTIONS, fakeIo());

    expect(sagemaker.calls().map((c) => c.args[0].constructor.name)).toEqual([
      'CreateModelCommand',
      'CreateEndpointConfigCommand',
      'CreateEndpointCommand',
      'DescribeEndpointCommand',
    ]);
    expect(sagemaker.commandCalls(CreateModelCommand)[0]!.args[0].input).toEqual({
      ModelName: 'kokoro-model',
      ExecutionRoleArn: ROLE,
      PrimaryContainer: {
        Image: IMAGE,
        ModelDataSource: {
          S3DataSource: {
            S3Uri: 's3://models/kokoro-82m/',
            S3DataType: 'S3Prefix',
            CompressionType: 'None',
          },
        },
        Environment: { KOKORO_DTYPE: 'fp16' },
      },
    });
    expect(sagemaker.commandCalls(CreateEndpointConfigCommand)[0]!.args[0].input).toEqual({
      EndpointConfigName: 'kokoro-config',
      ProductionVariants: [
        {
          VariantName: 'AllTraffic',
          ModelName: 'kokoro-model',
          InstanceType: 'ml.g5.xlarge',
          InitialInstanceCount: 1,
          InitialVariantWeight: 1,
          ContainerStartupHealthCheckTimeoutInSeconds: 600,
          ModelDataDownloadTimeoutInSeconds: 600,
          InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1',
        },
      ],
    });
    expect(sagemaker.commandCalls(CreateEndpointCommand)[0]!.args[0].input).toEqual({
      EndpointName: 'kokoro',
      EndpointConfigName: 'kokoro-config',
    });
    expect(sagemaker.commandCalls(DescribeEndpointCommand)[0]!.args[0].input).toEqual({
      EndpointName: 'kokoro',
    });
    // No plan, no autoscaling.
    expect(autoscaling.calls()).toHaveLength(0);
    expect(cloudwatch.calls()).toHaveLength(0);
  });

  it('waits through Creating until InService, printing status and elapsed time', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolvesOnce({ EndpointStatus: 'Creating' })
      .resolves({ EndpointStatus: 'InService' });
    const io = fakeIo(30_000);
    await deploy(clients(), OPTIONS, io);
    expect(sagemaker.commandCalls(DescribeEndpointCommand)).toHaveLength(4);
    expect(io.lines).toEqual([
      'created model kokoro-model',
      'created endpoint configuration kokoro-config',
      'creating endpoint kokoro (1 × ml.g5.xlarge)',
      'endpoint kokoro: Creating (0s)',
      'endpoint kokoro: Creating (30s)',
      'endpoint kokoro: Creating (1m00s)',
      'endpoint kokoro: InService (1m30s)',
      'endpoint kokoro is InService',
    ]);
  });

  it('surfaces the FailureReason of a Failed endpoint', async () => {
    sagemaker.on(DescribeEndpointCommand).resolvesOnce({ EndpointStatus: 'Creating' }).resolves({
      EndpointStatus: 'Failed',
      FailureReason:
        'The primary container for production variant AllTraffic did not pass the ping health check.',
    });
    const attempt = deploy(clients(), SCALED, fakeIo());
    await expect(attempt).rejects.toThrow(DeployError);
    await expect(attempt).rejects.toThrow(/did not pass the ping health check/);
    await expect(attempt).rejects.toThrow(/\/aws\/sagemaker\/Endpoints\/kokoro/);
    // A failed endpoint gets no autoscaling.
    expect(autoscaling.calls()).toHaveLength(0);
    expect(cloudwatch.calls()).toHaveLength(0);
  });

  it('tolerates a Describe that does not see the new endpoint yet', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .rejectsOnce(notFound('Could not find endpoint "kokoro".'))
      .resolves({ EndpointStatus: 'InService' });
    const io = fakeIo();
    await waitForEndpoint(clients().sagemaker, 'kokoro', io);
    expect(io.lines).toEqual(['endpoint kokoro: Pending (0s)', 'endpoint kokoro: InService (15s)']);
  });

  it('gives up waiting after the timeout, saying so', async () => {
    sagemaker.on(DescribeEndpointCommand).resolves({ EndpointStatus: 'Creating' });
    const io = { ...fakeIo(60_000), waitTimeoutMs: 5 * 60_000 };
    await expect(waitForEndpoint(clients().sagemaker, 'kokoro', io)).rejects.toThrow(
      /still Creating after 5m00s; stopped waiting/,
    );
  });

  it('points at destroy when a resource already exists', async () => {
    sagemaker
      .on(CreateModelCommand)
      .rejects(
        notFound('Cannot create already existing model "arn:aws:sagemaker:us-east-1:1:model/kokoro-model".'),
      );
    await expect(deploy(clients(), OPTIONS, fakeIo())).rejects.toThrow(
      /already existing model.*npm run deploy -- destroy --name kokoro/,
    );
    expect(sagemaker.commandCalls(CreateEndpointConfigCommand)).toHaveLength(0);
  });
});

describe('deploy --autoscaling', () => {
  /** InService after `creating` polls; the step policy's PutScalingPolicy answers with STEP_ARN. */
  function mockHappyPath(creating = 1) {
    let describe = sagemaker.on(DescribeEndpointCommand);
    for (let i = 0; i < creating; i++) describe = describe.resolvesOnce({ EndpointStatus: 'Creating' });
    describe.resolves({ EndpointStatus: 'InService' });
    autoscaling
      .on(PutScalingPolicyCommand, { PolicyName: 'kokoro-target-tracking' })
      .resolves({ PolicyARN: 'arn:aws:autoscaling:…:policyName/kokoro-target-tracking', Alarms: [] });
    autoscaling
      .on(PutScalingPolicyCommand, { PolicyName: 'kokoro-step-scale-in' })
      .resolves({ PolicyARN: STEP_ARN });
  }

  it('gives the container the plan’s admission limits and the EMF settings; an explicit --env wins', async () => {
    mockHappyPath();
    const cli = deployCli([
      '--env',
      'KOKORO_DTYPE=fp16',
      '--env',
      'MAX_SESSIONS=8',
      '--autoscaling',
      'plan.json',
      '--metrics-namespace',
      'Kokoro/Prod',
    ]);
    await deploy(clients(), cli.options, fakeIo());
    const model = sagemaker.commandCalls(CreateModelCommand)[0]!.args[0].input;
    expect(model.PrimaryContainer?.Environment).toEqual({
      MAX_SESSIONS: '8',
      MAX_QUEUED_JOBS: '18',
      MAX_HTTP_STREAMS: '6',
      KOKORO_DTYPE: 'fp16',
      METRICS_EMF: 'true',
      METRICS_EMF_NAMESPACE: 'Kokoro/Prod',
      METRICS_EMF_DIMENSIONS: 'EndpointName=kokoro,VariantName=AllTraffic',
    });
    const config = sagemaker.commandCalls(CreateEndpointConfigCommand)[0]!.args[0].input;
    expect(config.ProductionVariants?.[0]?.InitialInstanceCount).toBe(3);
    expect(cloudwatch.commandCalls(PutMetricAlarmCommand)[1]!.args[0].input.Namespace).toBe('Kokoro/Prod');
  });

  it('starts at the plan’s min_instances unless --instance-count says otherwise', () => {
    expect(deployCli(['--autoscaling', 'plan.json']).options.instanceCount).toBe(3);
    expect(deployCli(['--autoscaling', 'plan.json', '--instance-count', '5']).options.instanceCount).toBe(5);
    expect(deployCli(['--instance-count', '5']).options.instanceCount).toBe(5);
    expect(deployCli([]).options.instanceCount).toBe(1);
  });

  it('registers autoscaling only once the endpoint is InService, then puts the alarms', async () => {
    mockHappyPath();
    const { clients: recording, calls } = recordingClients();
    const io = fakeIo();
    await deploy(recording, SCALED, io);
    expect(calls.map((c) => `${c.service} ${c.operation}`)).toEqual([
      'sagemaker CreateModel',
      'sagemaker CreateEndpointConfig',
      'sagemaker CreateEndpoint',
      'sagemaker DescribeEndpoint',
      'sagemaker DescribeEndpoint',
      'application-autoscaling RegisterScalableTarget',
      'application-autoscaling PutScalingPolicy',
      'application-autoscaling PutScalingPolicy',
      'cloudwatch PutMetricAlarm',
      'cloudwatch PutMetricAlarm',
    ]);
    expect(io.lines).toEqual([
      'created model kokoro-model',
      'created endpoint configuration kokoro-config',
      'creating endpoint kokoro (3 × ml.g5.xlarge)',
      'endpoint kokoro: Creating (0s)',
      'endpoint kokoro: InService (15s)',
      'endpoint kokoro is InService',
      'registered scalable target endpoint/kokoro/variant/AllTraffic (3 to 50 instances)',
      'put scaling policy kokoro-target-tracking (scale out at 4 concurrent requests per instance)',
      'put scaling policy kokoro-step-scale-in (scale in by 1 instance)',
      'put alarm kokoro-scale-in (average below 2 concurrent requests per instance)',
      `put alarm kokoro-ttfa-p95 (time to first audio p95 above 3000 ms, notifies ${TOPIC})`,
    ]);
  });

  it('sends exactly the scalable target, both policies and both alarms', async () => {
    mockHappyPath();
    await deploy(clients(), SCALED, fakeIo());
    expect(autoscaling.commandCalls(RegisterScalableTargetCommand).map((c) => c.args[0].input)).toEqual([
      { ...SCALABLE, MinCapacity: 3, MaxCapacity: 50 },
    ]);
    expect(autoscaling.commandCalls(PutScalingPolicyCommand).map((c) => c.args[0].input)).toEqual([
      {
        PolicyName: 'kokoro-target-tracking',
        ...SCALABLE,
        PolicyType: 'TargetTrackingScaling',
        TargetTrackingScalingPolicyConfiguration: {
          TargetValue: 4,
          PredefinedMetricSpecification: {
            PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution',
          },
          DisableScaleIn: true,
          ScaleOutCooldown: 60,
          ScaleInCooldown: 900,
        },
      },
      {
        PolicyName: 'kokoro-step-scale-in',
        ...SCALABLE,
        PolicyType: 'StepScaling',
        StepScalingPolicyConfiguration: {
          AdjustmentType: 'ChangeInCapacity',
          StepAdjustments: [{ MetricIntervalUpperBound: 0, ScalingAdjustment: -1 }],
          Cooldown: 900,
          MetricAggregationType: 'Average',
        },
      },
    ]);
    expect(cloudwatch.commandCalls(PutMetricAlarmCommand).map((c) => c.args[0].input)).toEqual([
      {
        AlarmName: 'kokoro-scale-in',
        AlarmDescription:
          'Removes one instance of kokoro when it averaged fewer than 2 concurrent requests per instance for 900 s (npm run deploy).',
        Namespace: 'AWS/SageMaker',
        MetricName: 'ConcurrentRequestsPerModel',
        Dimensions: DIMENSIONS,
        Statistic: 'Average',
        Period: 60,
        EvaluationPeriods: 15,
        DatapointsToAlarm: 15,
        Threshold: 2,
        ComparisonOperator: 'LessThanThreshold',
        TreatMissingData: 'breaching',
        // The ARN the step policy's PutScalingPolicy answered with.
        AlarmActions: [STEP_ARN],
      },
      {
        AlarmName: 'kokoro-ttfa-p95',
        AlarmDescription:
          "Time to first audio p95 of kokoro above the plan's SLO of 3000 ms in 3 of 5 minutes (npm run deploy).",
        Namespace: 'KokoroTTS',
        MetricName: 'TimeToFirstAudio',
        Unit: 'Milliseconds',
        Dimensions: DIMENSIONS,
        ExtendedStatistic: 'p95',
        Period: 60,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 3,
        Threshold: 3000,
        ComparisonOperator: 'GreaterThanThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [TOPIC],
        OKActions: [TOPIC],
      },
    ]);
  });

  it('gives the TTFA alarm no actions without --alarm-topic', () => {
    const { ttfaAlarm } = autoscalingRequests(
      { endpoint: 'kokoro', variant: 'AllTraffic' },
      { plan: PLAN, metricsNamespace: 'KokoroTTS', alarmTopic: undefined },
      STEP_ARN,
    );
    expect(ttfaAlarm).not.toHaveProperty('AlarmActions');
    expect(ttfaAlarm).not.toHaveProperty('OKActions');
    expect(deployCli(['--autoscaling', 'plan.json']).options.autoscaling).toEqual({
      plan: PLAN,
      metricsNamespace: 'KokoroTTS',
      alarmTopic: undefined,
    });
  });

  it('sends what --dry-run prints, the real step policy ARN in place of the placeholder', async () => {
    // One DescribeEndpoint, as the dry run shows the polling.
    mockHappyPath(0);
    const cli = deployCli(['--autoscaling', 'plan.json', '--alarm-topic', TOPIC]);
    const { clients: recording, calls } = recordingClients();
    await deploy(recording, cli.options, fakeIo());
    const planned = JSON.parse(
      JSON.stringify(plannedRequests(cli)).replace('<PolicyARN of kokoro-step-scale-in>', STEP_ARN),
    ) as unknown;
    expect(JSON.parse(JSON.stringify(calls))).toEqual(planned);
  });

  it('says the endpoint is up without complete autoscaling when a policy fails', async () => {
    mockHappyPath();
    autoscaling.on(PutScalingPolicyCommand).rejects(
      Object.assign(
        new Error('User is not authorized to perform: application-autoscaling:PutScalingPolicy'),
        {
          name: 'AccessDeniedException',
        },
      ),
    );
    const attempt = deploy(clients(), SCALED, fakeIo());
    await expect(attempt).rejects.toThrow(
      /not authorized.*endpoint kokoro is InService, but its autoscaling/,
    );
    await expect(attempt).rejects.toThrow(/npm run deploy -- destroy --name kokoro/);
    expect(cloudwatch.calls()).toHaveLength(0);
  });

  it('refuses to skip waiting, before creating anything', async () => {
    await expect(deploy(clients(), SCALED, fakeIo(), false)).rejects.toThrow(DeployError);
    expect(allCalls()).toHaveLength(0);
  });
});

describe('destroy', () => {
  it('deletes the alarms, the policies, the scalable target, then the endpoint, its configuration and the model', async () => {
    const { clients: recording, calls } = recordingClients();
    const io = fakeIo();
    await destroy(recording, 'kokoro', io);
    expect(calls).toEqual([
      {
        service: 'cloudwatch',
        operation: 'DeleteAlarms',
        input: { AlarmNames: ['kokoro-scale-in', 'kokoro-ttfa-p95'] },
      },
      {
        service: 'application-autoscaling',
        operation: 'DeleteScalingPolicy',
        input: { PolicyName: 'kokoro-target-tracking', ...SCALABLE },
      },
      {
        service: 'application-autoscaling',
        operation: 'DeleteScalingPolicy',
        input: { PolicyName: 'kokoro-step-scale-in', ...SCALABLE },
      },
      { service: 'application-autoscaling', operation: 'DeregisterScalableTarget', input: SCALABLE },
      { service: 'sagemaker', operation: 'DeleteEndpoint', input: { EndpointName: 'kokoro' } },
      {
        service: 'sagemaker',
        operation: 'DeleteEndpointConfig',
        input: { EndpointConfigName: 'kokoro-config' },
      },
      { service: 'sagemaker', operation: 'DeleteModel', input: { ModelName: 'kokoro-model' } },
    ]);
    expect(io.lines).toEqual([
      'deleted alarms kokoro-scale-in, kokoro-ttfa-p95',
      'deleted scaling policy kokoro-target-tracking',
      'deleted scaling policy kokoro-step-scale-in',
      'deregistered scalable target endpoint/kokoro/variant/AllTraffic',
      'deleted endpoint kokoro',
      'deleted endpoint configuration kokoro-config',
      'deleted model kokoro-model',
    ]);
  });

  it('removes an endpoint deployed without autoscaling: the missing policies and target are skipped', async () => {
    // What Application Auto Scaling answers for a variant that was never registered.
    const missing = (message: string) => new ObjectNotFoundException({ $metadata: {}, message });
    autoscaling
      .on(DeleteScalingPolicyCommand)
      .rejects(missing('No scaling policy found for service namespace: sagemaker'));
    autoscaling
      .on(DeregisterScalableTargetCommand)
      .rejects(missing('No scalable target registered for service namespace: sagemaker'));
    const io = fakeIo();
    await destroy(clients(), 'kokoro', io);
    expect(cloudwatch.commandCalls(DeleteAlarmsCommand)).toHaveLength(1);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(1);
    expect(io.lines).toEqual([
      'deleted alarms kokoro-scale-in, kokoro-ttfa-p95',
      'scaling policy kokoro-target-tracking does not exist; skipped',
      'scaling policy kokoro-step-scale-in does not exist; skipped',
      'scalable target endpoint/kokoro/variant/AllTraffic does not exist; skipped',
      'deleted endpoint kokoro',
      'deleted endpoint configuration kokoro-config',
      'deleted model kokoro-model',
    ]);
  });

  it('tolerates CloudWatch’s ResourceNotFound for the alarms', async () => {
    cloudwatch.on(DeleteAlarmsCommand).rejects(new ResourceNotFound({ $metadata: {}, message: 'not found' }));
    const io = fakeIo();
    await destroy(clients(), 'kokoro', io);
    expect(io.lines[0]).toBe('alarms kokoro-scale-in, kokoro-ttfa-p95 does not exist; skipped');
    expect(autoscaling.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(1);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(1);
  });

  it('skips what does not exist and still deletes the rest', async () => {
    sagemaker
      .on(DeleteEndpointCommand)
      .rejects(notFound('Could not find endpoint "arn:aws:sagemaker:us-east-1:1:endpoint/kokoro".'));
    sagemaker
      .on(DeleteEndpointConfigCommand)
      .rejects(
        notFound(
          'Could not find endpoint configuration "arn:aws:sagemaker:us-east-1:1:endpoint-config/kokoro-config".',
        ),
      );
    const io = fakeIo();
    await destroy(clients(), 'kokoro', io);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(1);
    expect(io.lines.slice(4)).toEqual([
      'endpoint kokoro does not exist; skipped',
      'endpoint configuration kokoro-config does not exist; skipped',
      'deleted model kokoro-model',
    ]);
  });

  it('stops on any other error', async () => {
    sagemaker.on(DeleteEndpointCommand).rejects(
      new SageMakerServiceException({
        name: 'AccessDeniedException',
        $fault: 'client',
        $metadata: {},
        message: 'not authorized to perform: sagemaker:DeleteEndpoint',
      }),
    );
    await expect(destroy(clients(), 'kokoro', fakeIo())).rejects.toThrow(/not authorized/);
    expect(sagemaker.commandCalls(DeleteEndpointConfigCommand)).toHaveLength(0);
    expect(sagemaker.commandCalls(DeleteModelCommand)).toHaveLength(0);
  });

  it('stops before the endpoint when autoscaling cannot be removed', async () => {
    autoscaling.on(DeleteScalingPolicyCommand).rejects(
      Object.assign(new Error('not authorized to perform: application-autoscaling:DeleteScalingPolicy'), {
        name: 'AccessDeniedException',
      }),
    );
    await expect(destroy(clients(), 'kokoro', fakeIo())).rejects.toThrow(/DeleteScalingPolicy/);
    expect(autoscaling.commandCalls(DeregisterScalableTargetCommand)).toHaveLength(0);
    expect(sagemaker.calls()).toHaveLength(0);
  });
});

describe('isNotFound', () => {
  it('recognises the not-found answers and nothing else', () => {
    expect(isNotFound(notFound('Could not find model "arn:…".'))).toBe(true);
    expect(isNotFound(Object.assign(new Error('x'), { name: 'ResourceNotFound' }))).toBe(true);
    expect(
      isNotFound(new ObjectNotFoundException({ $metadata: {}, message: 'No scaling policy found' })),
    ).toBe(true);
    expect(isNotFound(new ResourceNotFound({ $metadata: {}, message: 'x' }))).toBe(true);
    expect(isNotFound(notFound('1 validation error detected: Value at instanceType failed'))).toBe(false);
    expect(isNotFound('Could not find')).toBe(false);
  });
});

describe('plan file', () => {
  it('accepts the planner’s file and keeps only the fields it knows', () => {
    expect(parsePlan({ ...PLAN, notes: 'from npm run plan', rho: 0.7 }, 'plan.json')).toEqual(PLAN);
  });

  it('names every missing field', () => {
    for (const field of Object.keys(PLAN)) {
      const plan: Record<string, unknown> = { ...PLAN };
      delete plan[field];
      expect(() => parsePlan(plan, 'plan.json'), field).toThrow(UsageError);
      expect(() => parsePlan(plan, 'plan.json'), field).toThrow(`Plan plan.json: "${field}" should be`);
      expect(() => parsePlan(plan, 'plan.json'), field).toThrow('got nothing (the field is missing)');
    }
  });

  it('refuses values out of range, naming the field and what is valid', () => {
    const bad: [Record<string, unknown>, string][] = [
      [{ kind: 'report' }, '"kind" should be "plan"; got "report".'],
      [{ version: 2 }, '"version" should be 1 (the plan format this deploy reads); got 2.'],
      [{ transport: 'grpc' }, '"transport" should be one of "ws", "http"; got "grpc".'],
      [{ slo_ms: 0 }, '"slo_ms" should be a number greater than 0; got 0.'],
      [{ slo_ms: '3000' }, '"slo_ms" should be a number greater than 0; got "3000".'],
      [{ q_max: 1.5 }, '"q_max" should be a whole number from 1 to 100000; got 1.5.'],
      [{ t_total_s: -1 }, '"t_total_s" should be a number greater than 0; got -1.'],
      [{ target_per_instance: 0 }, '"target_per_instance" should be a number greater than 0; got 0.'],
      [{ scale_in_threshold: 0 }, '"scale_in_threshold" should be a number greater than 0; got 0.'],
      [{ min_instances: 0 }, '"min_instances" should be a whole number from 1 to 100; got 0.'],
      [{ max_instances: 1001 }, '"max_instances" should be a whole number from 1 to 1000; got 1001.'],
      [
        { scale_out_cooldown_s: -1 },
        '"scale_out_cooldown_s" should be a whole number from 0 to 86400; got -1.',
      ],
      [
        { scale_in_cooldown_s: null },
        '"scale_in_cooldown_s" should be a whole number from 0 to 86400; got null.',
      ],
      [
        { scale_in_period_s: 45 },
        '"scale_in_period_s" should be 10, 20, 30, or a multiple of 60 up to 86400; got 45.',
      ],
      [
        { scale_in_evaluation_periods: 0 },
        '"scale_in_evaluation_periods" should be a whole number from 1 to 10080; got 0.',
      ],
      [{ min_instances: 5, max_instances: 4 }, '"min_instances" (5) should be at most "max_instances" (4).'],
      [
        { scale_in_threshold: 4 },
        '"scale_in_threshold" (4) should be less than "target_per_instance" (4), or scale-in and scale-out would fight.',
      ],
      [
        { scale_in_evaluation_periods: 1441 },
        '"scale_in_evaluation_periods" × "scale_in_period_s" (86460 s) should be at most 86400 s',
      ],
      [{ admission: 'MAX_SESSIONS=6' }, '"admission" should be an object of environment variables'],
      [
        { admission: { ...PLAN.admission, MAX_SESSIONS: 6 } },
        '"admission.MAX_SESSIONS" should be a whole number of 1 or more, as a string ("6"); got 6.',
      ],
      [
        { admission: { MAX_SESSIONS: '6', MAX_QUEUED_JOBS: '18' } },
        '"admission.MAX_HTTP_STREAMS" should be a whole number of 1 or more, as a string ("6"); got nothing',
      ],
      [
        { admission: { ...PLAN.admission, 'BAD-NAME': '1' } },
        '"admission.BAD-NAME" should be named like an environment variable',
      ],
    ];
    for (const [change, message] of bad) {
      const plan = { ...PLAN, ...change };
      expect(() => parsePlan(plan, 'plan.json'), message).toThrow(UsageError);
      expect(() => parsePlan(plan, 'plan.json'), message).toThrow(`Plan plan.json: ${message}`);
    }
    expect(() => parsePlan([PLAN], 'plan.json')).toThrow('Plan plan.json: should hold a JSON object');
  });

  it('exits 2 naming the field, the file that is missing, or the JSON that does not parse', async () => {
    const run = async (path: string) => {
      const stderr = capture();
      const readText = files({
        'small.json': { ...PLAN, min_instances: 0 },
        'broken.json': '{"kind": "plan",',
      });
      const code = await main(['deploy', ...FLAGS, '--autoscaling', path], {
        env: { AWS_REGION: 'us-east-1' },
        stdout: capture(),
        stderr,
        readText,
        createClients: clients,
      });
      return { code, stderr: stderr.text() };
    };
    expect(await run('small.json')).toEqual({
      code: 2,
      stderr:
        'deploy: Plan small.json: "min_instances" should be a whole number from 1 to 100; got 0.\n' +
        'Run with --help for usage.\n',
    });
    const missing = await run('nowhere.json');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^deploy: --autoscaling: cannot read plan nowhere\.json: ENOENT/);
    const broken = await run('broken.json');
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^deploy: Plan broken\.json is not JSON: /);
    expect(allCalls()).toHaveLength(0);
  });
});

describe('command line', () => {
  it('defaults to one ml.g5.xlarge with the GPU host image and an uncompressed S3 prefix', () => {
    const cli = parseCli(['deploy', ...FLAGS, '--env', 'KOKORO_DTYPE=fp16', '--env', 'LOG_LEVEL=debug']);
    expect(cli).toMatchObject({
      command: 'deploy',
      dryRun: false,
      wait: true,
      options: {
        ...OPTIONS,
        modelS3: 's3://models/kokoro-82m',
        env: { KOKORO_DTYPE: 'fp16', LOG_LEVEL: 'debug' },
      },
    });
  });

  it('takes the region from --region, else AWS_REGION, else AWS_DEFAULT_REGION', () => {
    const region = (argv: string[], env: NodeJS.ProcessEnv) => {
      const cli = parseCli(['destroy', '--name', 'kokoro', ...argv], env);
      return cli.help ? undefined : cli.region;
    };
    expect(region(['--region', 'eu-west-1'], { AWS_REGION: 'us-east-1' })).toBe('eu-west-1');
    expect(region([], { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-east-1');
    expect(region([], { AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
    expect(region([], {})).toBeUndefined();
  });

  it('leaves the host image alone on CPU instances, and on request', () => {
    const ami = (argv: string[]) => deployCli(argv).options.amiVersion;
    expect(ami(['--instance-type', 'ml.c7i.xlarge'])).toBeUndefined();
    expect(ami(['--instance-type', 'ml.g6.xlarge'])).toBe(GPU_AMI_VERSION);
    expect(ami(['--ami-version', 'none'])).toBeUndefined();
    expect(ami(['--ami-version', 'al2-ami-sagemaker-inference-gpu-2-1'])).toBe(
      'al2-ami-sagemaker-inference-gpu-2-1',
    );
  });

  it('sends a .tar.gz object as compressed model data', () => {
    const cli = deployCli(['--model-s3', 's3://models/kokoro/model.tar.gz']);
    expect(deployRequests(cli.options).model.PrimaryContainer?.ModelDataSource).toEqual({
      S3DataSource: {
        S3Uri: 's3://models/kokoro/model.tar.gz',
        S3DataType: 'S3Object',
        CompressionType: 'Gzip',
      },
    });
  });

  it('refuses what SageMaker would refuse, naming the flag', () => {
    const plan = ['--autoscaling', 'plan.json'];
    const bad: [string[], RegExp][] = [
      [[], /Name a command/],
      [['launch', ...FLAGS], /Unknown command "launch"/],
      [['deploy', '--image', IMAGE], /--name is required/],
      [['deploy', '--name', 'kokoro'], /--image is required/],
      [['deploy', ...FLAGS, '--name', 'bad_name'], /--name "bad_name"/],
      [['deploy', ...FLAGS, '--name', 'x'.repeat(57)], /at most 56 characters/],
      [['deploy', ...FLAGS, '--role', 'SageMakerRole'], /--role should be an IAM role ARN/],
      [['deploy', ...FLAGS, '--model-s3', 'models/kokoro'], /--model-s3 should be s3:\/\//],
      [['deploy', ...FLAGS, '--env', 'NOVALUE'], /--env should be KEY=VALUE/],
      [['deploy', ...FLAGS, '--instance-count', '0'], /--instance-count should be a whole number/],
      [
        ['deploy', ...FLAGS, '--startup-timeout', '3601'],
        /--startup-timeout should be a whole number from 1 to 3600/,
      ],
      [['deploy', ...FLAGS, '--bogus'], /bogus/],
      [
        ['deploy', ...FLAGS, '--metrics-namespace', 'Kokoro'],
        /--metrics-namespace only applies with --autoscaling/,
      ],
      [['deploy', ...FLAGS, '--alarm-topic', TOPIC], /--alarm-topic only applies with --autoscaling/],
      [['deploy', ...FLAGS, ...plan, '--no-wait'], /--autoscaling and --no-wait do not go together/],
      [
        ['deploy', ...FLAGS, ...plan, '--metrics-namespace', 'AWS/SageMaker'],
        /--metrics-namespace should be/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--alarm-topic', 'kokoro-alarms'],
        /--alarm-topic should be an SNS topic ARN/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--instance-count', '60'],
        /--instance-count 60 is outside the plan's min_instances to max_instances \(3 to 50\)/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--env', 'METRICS_EMF_NAMESPACE=Other'],
        /--env METRICS_EMF_NAMESPACE=Other contradicts --autoscaling.*use --metrics-namespace instead/,
      ],
      [
        ['deploy', ...FLAGS, ...plan, '--env', 'METRICS_EMF=false'],
        /--env METRICS_EMF=false contradicts --autoscaling, which sets METRICS_EMF=true/,
      ],
    ];
    for (const [argv, message] of bad) {
      expect(() => parseCli(argv, {}, READ_PLAN), argv.join(' ')).toThrow(UsageError);
      expect(() => parseCli(argv, {}, READ_PLAN), argv.join(' ')).toThrow(message);
    }
    // Repeating what --autoscaling sets is no contradiction.
    expect(deployCli([...plan, '--env', 'METRICS_EMF=true']).options.env).toEqual({ METRICS_EMF: 'true' });
  });

  it('--dry-run prints every deploy call as one JSON line and calls nothing', async () => {
    const { code, calls, stderr } = await dryRun(['deploy', ...FLAGS, '--env', 'KOKORO_DTYPE=fp16']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(allCalls()).toHaveLength(0);
    for (const call of calls) expect(Object.keys(call)).toEqual(['service', 'operation', 'input']);
    expect(calls.map((c) => [c.service, c.operation])).toEqual([
      ['sagemaker', 'CreateModel'],
      ['sagemaker', 'CreateEndpointConfig'],
      ['sagemaker', 'CreateEndpoint'],
      ['sagemaker', 'DescribeEndpoint'],
    ]);
    expect(calls[0]!.input).toMatchObject({
      ModelName: 'kokoro-model',
      PrimaryContainer: {
        // The prefix gets the trailing slash SageMaker wants for uncompressed model data.
        ModelDataSource: { S3DataSource: { S3Uri: 's3://models/kokoro-82m/', S3DataType: 'S3Prefix' } },
        Environment: { KOKORO_DTYPE: 'fp16' },
      },
    });
    expect(calls[1]!.input).toMatchObject({ ProductionVariants: [{ InstanceType: 'ml.g5.xlarge' }] });
    expect(calls[2]!.input).toEqual({ EndpointName: 'kokoro', EndpointConfigName: 'kokoro-config' });
    expect(calls[3]!.input).toEqual({ EndpointName: 'kokoro' });
  });

  it('--dry-run with --no-wait stops at CreateEndpoint', async () => {
    const { calls } = await dryRun(['deploy', ...FLAGS, '--no-wait']);
    expect(calls.map((c) => c.operation)).toEqual(['CreateModel', 'CreateEndpointConfig', 'CreateEndpoint']);
  });

  it('--dry-run with --autoscaling adds the autoscaling calls after the wait, the ARN as a placeholder', async () => {
    const { code, calls } = await dryRun(['deploy', ...FLAGS, '--autoscaling', 'plan.json']);
    expect(code).toBe(0);
    expect(allCalls()).toHaveLength(0);
    for (const call of calls) expect(Object.keys(call)).toEqual(['service', 'operation', 'input']);
    expect(calls.map((c) => [c.service, c.operation])).toEqual([
      ['sagemaker', 'CreateModel'],
      ['sagemaker', 'CreateEndpointConfig'],
      ['sagemaker', 'CreateEndpoint'],
      ['sagemaker', 'DescribeEndpoint'],
      ['application-autoscaling', 'RegisterScalableTarget'],
      ['application-autoscaling', 'PutScalingPolicy'],
      ['application-autoscaling', 'PutScalingPolicy'],
      ['cloudwatch', 'PutMetricAlarm'],
      ['cloudwatch', 'PutMetricAlarm'],
    ]);
    expect(calls[1]!.input).toMatchObject({ ProductionVariants: [{ InitialInstanceCount: 3 }] });
    expect(calls[7]!.input).toMatchObject({
      AlarmName: 'kokoro-scale-in',
      AlarmActions: ['<PolicyARN of kokoro-step-scale-in>'],
    });
    expect(calls[8]!.input).toMatchObject({ AlarmName: 'kokoro-ttfa-p95', ExtendedStatistic: 'p95' });
    expect(calls[8]!.input).not.toHaveProperty('AlarmActions');
  });

  it('--dry-run prints the destroy calls and calls nothing', async () => {
    const stdout = capture();
    const code = await main(['destroy', '--name', 'kokoro', '--dry-run'], {
      env: {},
      stdout,
      stderr: capture(),
    });
    expect(code).toBe(0);
    expect(allCalls()).toHaveLength(0);
    const scalable =
      '"ServiceNamespace":"sagemaker","ResourceId":"endpoint/kokoro/variant/AllTraffic",' +
      '"ScalableDimension":"sagemaker:variant:DesiredInstanceCount"';
    expect(stdout.text()).toBe(
      [
        '{"service":"cloudwatch","operation":"DeleteAlarms","input":{"AlarmNames":["kokoro-scale-in","kokoro-ttfa-p95"]}}',
        `{"service":"application-autoscaling","operation":"DeleteScalingPolicy","input":{"PolicyName":"kokoro-target-tracking",${scalable}}}`,
        `{"service":"application-autoscaling","operation":"DeleteScalingPolicy","input":{"PolicyName":"kokoro-step-scale-in",${scalable}}}`,
        `{"service":"application-autoscaling","operation":"DeregisterScalableTarget","input":{${scalable}}}`,
        '{"service":"sagemaker","operation":"DeleteEndpoint","input":{"EndpointName":"kokoro"}}',
        '{"service":"sagemaker","operation":"DeleteEndpointConfig","input":{"EndpointConfigName":"kokoro-config"}}',
        '{"service":"sagemaker","operation":"DeleteModel","input":{"ModelName":"kokoro-model"}}',
        '',
      ].join('\n'),
    );
  });

  it('runs deploy end to end through main, exit 1 with the reason on failure', async () => {
    sagemaker
      .on(DescribeEndpointCommand)
      .resolves({ EndpointStatus: 'Failed', FailureReason: 'CannotStartContainerError' });
    const stdout = capture();
    const stderr = capture();
    const regions: (string | undefined)[] = [];
    const code = await main(['deploy', ...FLAGS], {
      env: { AWS_REGION: 'us-east-1' },
      stdout,
      stderr,
      createClients: (region) => {
        regions.push(region);
        return clients();
      },
      run: { sleep: async () => {}, now: () => 0 },
    });
    expect(code).toBe(1);
    expect(regions).toEqual(['us-east-1']);
    expect(stdout.text()).toContain('endpoint kokoro: Failed (0s)');
    expect(stderr.text()).toMatch(/^deploy: Endpoint kokoro is Failed: CannotStartContainerError/);
  });

  it('exits 2 with a pointer to --help on a usage error', async () => {
    const stderr = capture();
    expect(await main(['deploy', '--name', 'kokoro'], { env: {}, stdout: capture(), stderr })).toBe(2);
    expect(stderr.text()).toBe('deploy: --image is required for deploy.\nRun with --help for usage.\n');
    expect(allCalls()).toHaveLength(0);
  });

  it('documents the autoscaling flags in --help', async () => {
    const stdout = capture();
    expect(await main(['--help'], { env: {}, stdout, stderr: capture() })).toBe(0);
    for (const flag of ['--autoscaling PLAN', '--metrics-namespace NS', '--alarm-topic ARN']) {
      expect(stdout.text()).toContain(flag);
    }
  });
});
