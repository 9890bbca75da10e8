/**
 * scripts/deploy.ts against mocked SageMaker, Application Auto Scaling and CloudWatch clients: the
 * exact requests, their order, waiting, and removal. Autoscaling and the plan file are in
 * deploy-autoscaling.test.ts, the command line and --dry-run in deploy-cli.test.ts.
 */
import {
  DeleteScalingPolicyCommand,
  DeregisterScalableTargetCommand,
  ObjectNotFoundException,
} from '@aws-sdk/client-application-auto-scaling';
import { DeleteAlarmsCommand, ResourceNotFound } from '@aws-sdk/client-cloudwatch';
import {
  CreateEndpointCommand,
  CreateEndpointConfigCommand,
  CreateModelCommand,
  DeleteEndpointCommand,
  DeleteEndpointConfigCommand,
  DeleteModelCommand,
  DescribeEndpointCommand,
  SageMakerServiceException,
} from '@aws-sdk/client-sagemaker';
import { describe, expect, it } from 'vitest';
import { DeployError, deploy, destroy, isNotFound, waitForEndpoint } from '../../../scripts/deploy.ts';
import {
  sagemaker,
  autoscaling,
  cloudwatch,
  clients,
  ROLE,
  IMAGE,
  OPTIONS,
  SCALED,
  fakeIo,
  notFound,
  recordingClients,
  SCALABLE,
  resetMocksAroundEach,
} from './deploy-mocks.ts';

resetMocksAroundEach();

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
