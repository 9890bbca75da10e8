/**
 * `npm run deploy -- deploy --autoscaling PLAN` against mocked clients: what the plan gives the
 * container, the scalable target, policies and alarms after InService, and the plan file's checks.
 */
import {
  PutScalingPolicyCommand,
  RegisterScalableTargetCommand,
} from '@aws-sdk/client-application-auto-scaling';
import { PutMetricAlarmCommand } from '@aws-sdk/client-cloudwatch';
import {
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DescribeEndpointCommand,
} from '@aws-sdk/client-sagemaker';
import { describe, expect, it } from 'vitest';
import {
  DeployError,
  UsageError,
  autoscalingRequests,
  deploy,
  main,
  parsePlan,
  plannedRequests,
} from '../../../scripts/deploy.ts';
import {
  sagemaker,
  autoscaling,
  cloudwatch,
  clients,
  allCalls,
  TOPIC,
  STEP_ARN,
  FLAGS,
  PLAN,
  SCALED,
  files,
  fakeIo,
  capture,
  recordingClients,
  deployCli,
  SCALABLE,
  DIMENSIONS,
  resetMocksAroundEach,
} from './deploy-mocks.ts';

resetMocksAroundEach();

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
