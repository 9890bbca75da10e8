/**
 * Autoscaling and alarms of a deployed endpoint, from a capacity plan (lib/deploy-plan.ts):
 *
 * 1. the variant's instance count becomes a scalable target (plan min_instances to max_instances);
 * 2. target tracking on SageMaker's high-resolution ConcurrentRequestsPerModel scales *out* to hold
 *    target_per_instance concurrent requests per instance; its own scale-in is disabled, because
 *    target tracking scales in as soon as the load dips below the target, and a streaming session
 *    that lands on an instance being removed is cut off;
 * 3. a step policy removes one instance at a time, triggered by an alarm that needs the average to
 *    stay below scale_in_threshold for scale_in_evaluation_periods × scale_in_period_s;
 * 4. an alarm on the server's own time-to-first-audio p95 (EMF metrics) against the plan's SLO.
 *
 * The request builders are pure, for `--dry-run` and the tests; `registerAutoscaling` sends them.
 */
import {
  DeleteScalingPolicyCommand,
  DeregisterScalableTargetCommand,
  PutScalingPolicyCommand,
  RegisterScalableTargetCommand,
  type ApplicationAutoScalingClient,
  type DeleteScalingPolicyCommandInput,
  type DeregisterScalableTargetCommandInput,
  type PutScalingPolicyCommandInput,
  type RegisterScalableTargetCommandInput,
} from '@aws-sdk/client-application-auto-scaling';
import {
  DeleteAlarmsCommand,
  PutMetricAlarmCommand,
  type CloudWatchClient,
  type DeleteAlarmsCommandInput,
  type PutMetricAlarmCommandInput,
} from '@aws-sdk/client-cloudwatch';
import { DEFAULT_EMF_NAMESPACE } from '../../server/config/settings-logging.ts';
import type { ApiCall, RemovalStep } from './deploy-aws.ts';
import type { ScalingPlan } from './deploy-plan.ts';

/** CloudWatch namespace of the server's EMF metrics unless --metrics-namespace says otherwise. */
export const DEFAULT_METRICS_NAMESPACE = DEFAULT_EMF_NAMESPACE;
/** The server's EMF metric of time to first audio, and its unit (an alarm only sees its own unit). */
export const TTFA_METRIC = { name: 'TimeToFirstAudio', unit: 'Milliseconds' } as const;
/** The TTFA alarm fires when 3 of the last 5 minutes had a p95 above the SLO: not on one slow minute. */
export const TTFA_ALARM_WINDOW = { periodS: 60, evaluationPeriods: 5, datapointsToAlarm: 3 } as const;
const SERVICE_NAMESPACE = 'sagemaker';
const SCALABLE_DIMENSION = 'sagemaker:variant:DesiredInstanceCount';

/** The endpoint variant that scales. */
export interface ScalingTarget {
  readonly endpoint: string;
  readonly variant: string;
}

export interface AutoscalingOptions {
  readonly plan: ScalingPlan;
  /** CloudWatch namespace the server publishes its EMF metrics under. */
  readonly metricsNamespace: string;
  /** SNS topic the TTFA alarm notifies (on alarm and on recovery); undefined for none. */
  readonly alarmTopic: string | undefined;
}

export interface AutoscalingNames {
  /** Application Auto Scaling's name of the variant. */
  readonly resourceId: string;
  readonly targetTrackingPolicy: string;
  readonly stepScaleInPolicy: string;
  readonly scaleInAlarm: string;
  readonly ttfaAlarm: string;
}

export function autoscalingNames(target: ScalingTarget): AutoscalingNames {
  return {
    resourceId: `endpoint/${target.endpoint}/variant/${target.variant}`,
    targetTrackingPolicy: `${target.endpoint}-target-tracking`,
    stepScaleInPolicy: `${target.endpoint}-step-scale-in`,
    scaleInAlarm: `${target.endpoint}-scale-in`,
    ttfaAlarm: `${target.endpoint}-ttfa-p95`,
  };
}

/** The fields that name the variant's instance count to Application Auto Scaling. */
function scalableOf(names: AutoscalingNames) {
  return {
    ServiceNamespace: SERVICE_NAMESPACE,
    ResourceId: names.resourceId,
    ScalableDimension: SCALABLE_DIMENSION,
  } as const;
}

/** Stands for the step policy's ARN in `--dry-run`, where PutScalingPolicy has not answered. */
export function stepPolicyArnPlaceholder(target: ScalingTarget): string {
  return `<PolicyARN of ${autoscalingNames(target).stepScaleInPolicy}>`;
}

/** The metric dimensions of the variant, for SageMaker's metrics and the server's alike. */
function dimensions(target: ScalingTarget) {
  return [
    { Name: 'EndpointName', Value: target.endpoint },
    { Name: 'VariantName', Value: target.variant },
  ];
}

/**
 * Container environment that makes the server publish its metrics as CloudWatch EMF, under the
 * namespace and dimensions the TTFA alarm watches.
 */
export function emfEnvironment(target: ScalingTarget, metricsNamespace: string): Record<string, string> {
  return {
    METRICS_EMF: 'true',
    METRICS_EMF_NAMESPACE: metricsNamespace,
    METRICS_EMF_DIMENSIONS: dimensions(target)
      .map((d) => `${d.Name}=${d.Value}`)
      .join(','),
  };
}

export interface AutoscalingRequests {
  readonly scalableTarget: RegisterScalableTargetCommandInput;
  readonly targetTrackingPolicy: PutScalingPolicyCommandInput;
  readonly stepScaleInPolicy: PutScalingPolicyCommandInput;
  readonly scaleInAlarm: PutMetricAlarmCommandInput;
  readonly ttfaAlarm: PutMetricAlarmCommandInput;
}

/**
 * The scale-in alarm, whose action is the step policy: `stepPolicyArn` is what PutScalingPolicy of
 * that policy returned.
 */
export function scaleInAlarmRequest(
  target: ScalingTarget,
  plan: ScalingPlan,
  stepPolicyArn: string,
): PutMetricAlarmCommandInput {
  const names = autoscalingNames(target);
  const windowS = plan.scale_in_period_s * plan.scale_in_evaluation_periods;
  return {
    AlarmName: names.scaleInAlarm,
    AlarmDescription:
      `Removes one instance of ${target.endpoint} when it averaged fewer than ${plan.scale_in_threshold} ` +
      `concurrent requests per instance for ${windowS} s (npm run deploy).`,
    Namespace: 'AWS/SageMaker',
    MetricName: 'ConcurrentRequestsPerModel',
    Dimensions: dimensions(target),
    Statistic: 'Average',
    Period: plan.scale_in_period_s,
    EvaluationPeriods: plan.scale_in_evaluation_periods,
    DatapointsToAlarm: plan.scale_in_evaluation_periods,
    Threshold: plan.scale_in_threshold,
    ComparisonOperator: 'LessThanThreshold',
    // An endpoint without traffic may publish no datapoints at all. Counting those as breaching
    // lets an idle fleet shrink, one instance per cooldown, down to min_instances; notBreaching
    // would keep it at its peak size for as long as nobody calls it.
    TreatMissingData: 'breaching',
    AlarmActions: [stepPolicyArn],
  };
}

/** Every autoscaling request, in the order `registerAutoscaling` sends them. */
export function autoscalingRequests(
  target: ScalingTarget,
  options: AutoscalingOptions,
  stepPolicyArn: string,
): AutoscalingRequests {
  const { plan } = options;
  const names = autoscalingNames(target);
  const scalable = scalableOf(names);
  const topic = options.alarmTopic === undefined ? [] : [options.alarmTopic];
  return {
    scalableTarget: { ...scalable, MinCapacity: plan.min_instances, MaxCapacity: plan.max_instances },
    targetTrackingPolicy: {
      PolicyName: names.targetTrackingPolicy,
      ...scalable,
      PolicyType: 'TargetTrackingScaling',
      TargetTrackingScalingPolicyConfiguration: {
        TargetValue: plan.target_per_instance,
        PredefinedMetricSpecification: {
          PredefinedMetricType: 'SageMakerVariantConcurrentRequestsPerModelHighResolution',
        },
        // Scale-in is the step policy's job (see the header).
        DisableScaleIn: true,
        ScaleOutCooldown: plan.scale_out_cooldown_s,
        ScaleInCooldown: plan.scale_in_cooldown_s,
      },
    },
    stepScaleInPolicy: {
      PolicyName: names.stepScaleInPolicy,
      ...scalable,
      PolicyType: 'StepScaling',
      StepScalingPolicyConfiguration: {
        AdjustmentType: 'ChangeInCapacity',
        // Anywhere below the alarm's threshold: one instance fewer.
        StepAdjustments: [{ MetricIntervalUpperBound: 0, ScalingAdjustment: -1 }],
        Cooldown: plan.scale_in_cooldown_s,
        MetricAggregationType: 'Average',
      },
    },
    scaleInAlarm: scaleInAlarmRequest(target, plan, stepPolicyArn),
    ttfaAlarm: {
      AlarmName: names.ttfaAlarm,
      AlarmDescription:
        `Time to first audio p95 of ${target.endpoint} above the plan's SLO of ${plan.slo_ms} ms ` +
        `in ${TTFA_ALARM_WINDOW.datapointsToAlarm} of ${TTFA_ALARM_WINDOW.evaluationPeriods} minutes (npm run deploy).`,
      Namespace: options.metricsNamespace,
      MetricName: TTFA_METRIC.name,
      Unit: TTFA_METRIC.unit,
      Dimensions: dimensions(target),
      ExtendedStatistic: 'p95',
      Period: TTFA_ALARM_WINDOW.periodS,
      EvaluationPeriods: TTFA_ALARM_WINDOW.evaluationPeriods,
      DatapointsToAlarm: TTFA_ALARM_WINDOW.datapointsToAlarm,
      Threshold: plan.slo_ms,
      ComparisonOperator: 'GreaterThanThreshold',
      // No requests, no latency to complain about.
      TreatMissingData: 'notBreaching',
      ...(topic.length === 0 ? {} : { AlarmActions: topic, OKActions: topic }),
    },
  };
}

/** The calls `registerAutoscaling` makes, for `--dry-run` (the step policy ARN as a placeholder). */
export function autoscalingCalls(target: ScalingTarget, options: AutoscalingOptions): ApiCall[] {
  const r = autoscalingRequests(target, options, stepPolicyArnPlaceholder(target));
  return [
    { service: 'application-autoscaling', operation: 'RegisterScalableTarget', input: r.scalableTarget },
    { service: 'application-autoscaling', operation: 'PutScalingPolicy', input: r.targetTrackingPolicy },
    { service: 'application-autoscaling', operation: 'PutScalingPolicy', input: r.stepScaleInPolicy },
    { service: 'cloudwatch', operation: 'PutMetricAlarm', input: r.scaleInAlarm },
    { service: 'cloudwatch', operation: 'PutMetricAlarm', input: r.ttfaAlarm },
  ];
}

export interface AutoscalingRemovalRequests {
  readonly alarms: DeleteAlarmsCommandInput;
  readonly targetTrackingPolicy: DeleteScalingPolicyCommandInput;
  readonly stepScaleInPolicy: DeleteScalingPolicyCommandInput;
  readonly scalableTarget: DeregisterScalableTargetCommandInput;
}

/** Undoes `autoscalingRequests`: the alarms first (the scale-in alarm points at the step policy). */
export function autoscalingRemovalRequests(target: ScalingTarget): AutoscalingRemovalRequests {
  const names = autoscalingNames(target);
  const scalable = scalableOf(names);
  return {
    alarms: { AlarmNames: [names.scaleInAlarm, names.ttfaAlarm] },
    targetTrackingPolicy: { PolicyName: names.targetTrackingPolicy, ...scalable },
    stepScaleInPolicy: { PolicyName: names.stepScaleInPolicy, ...scalable },
    scalableTarget: { ...scalable },
  };
}

export function autoscalingRemovalCalls(target: ScalingTarget): ApiCall[] {
  const r = autoscalingRemovalRequests(target);
  return [
    { service: 'cloudwatch', operation: 'DeleteAlarms', input: r.alarms },
    { service: 'application-autoscaling', operation: 'DeleteScalingPolicy', input: r.targetTrackingPolicy },
    { service: 'application-autoscaling', operation: 'DeleteScalingPolicy', input: r.stepScaleInPolicy },
    { service: 'application-autoscaling', operation: 'DeregisterScalableTarget', input: r.scalableTarget },
  ];
}

/** The parts of the clients the commands use: `send`, so tests can mock them. */
export type AutoScaling = Pick<ApplicationAutoScalingClient, 'send'>;
export type CloudWatch = Pick<CloudWatchClient, 'send'>;

export interface AutoscalingClients {
  readonly autoscaling: AutoScaling;
  readonly cloudwatch: CloudWatch;
}

/**
 * Registers the scalable target, puts both policies and both alarms, in that order. The endpoint
 * must be InService: Application Auto Scaling refuses a variant that is still being created.
 */
export async function registerAutoscaling(
  clients: AutoscalingClients,
  target: ScalingTarget,
  options: AutoscalingOptions,
  log: (line: string) => void,
): Promise<void> {
  const { plan } = options;
  const names = autoscalingNames(target);
  // The ARN is only known once the step policy exists; the alarm is rebuilt with it below.
  const r = autoscalingRequests(target, options, stepPolicyArnPlaceholder(target));
  await clients.autoscaling.send(new RegisterScalableTargetCommand(r.scalableTarget));
  log(
    `registered scalable target ${names.resourceId} (${plan.min_instances} to ${plan.max_instances} instances)`,
  );
  await clients.autoscaling.send(new PutScalingPolicyCommand(r.targetTrackingPolicy));
  log(
    `put scaling policy ${names.targetTrackingPolicy} (scale out at ${plan.target_per_instance} concurrent requests per instance)`,
  );
  const step = await clients.autoscaling.send(new PutScalingPolicyCommand(r.stepScaleInPolicy));
  if (step?.PolicyARN === undefined) {
    throw new Error(
      `PutScalingPolicy ${names.stepScaleInPolicy} returned no PolicyARN for the scale-in alarm.`,
    );
  }
  log(`put scaling policy ${names.stepScaleInPolicy} (scale in by 1 instance)`);
  await clients.cloudwatch.send(new PutMetricAlarmCommand(scaleInAlarmRequest(target, plan, step.PolicyARN)));
  log(
    `put alarm ${names.scaleInAlarm} (average below ${plan.scale_in_threshold} concurrent requests per instance)`,
  );
  await clients.cloudwatch.send(new PutMetricAlarmCommand(r.ttfaAlarm));
  log(
    `put alarm ${names.ttfaAlarm} (time to first audio p95 above ${plan.slo_ms} ms` +
      `${options.alarmTopic === undefined ? '' : `, notifies ${options.alarmTopic}`})`,
  );
}

/** `destroy`'s autoscaling steps; each tolerates a missing resource (see runRemovals). */
export function autoscalingRemovalSteps(clients: AutoscalingClients, target: ScalingTarget): RemovalStep[] {
  const r = autoscalingRemovalRequests(target);
  const names = autoscalingNames(target);
  return [
    {
      // DeleteAlarms of an alarm that does not exist succeeds, so this line cannot tell which did.
      what: `alarms ${names.scaleInAlarm}, ${names.ttfaAlarm}`,
      done: 'deleted',
      run: () => clients.cloudwatch.send(new DeleteAlarmsCommand(r.alarms)),
    },
    {
      what: `scaling policy ${names.targetTrackingPolicy}`,
      done: 'deleted',
      run: () => clients.autoscaling.send(new DeleteScalingPolicyCommand(r.targetTrackingPolicy)),
    },
    {
      what: `scaling policy ${names.stepScaleInPolicy}`,
      done: 'deleted',
      run: () => clients.autoscaling.send(new DeleteScalingPolicyCommand(r.stepScaleInPolicy)),
    },
    {
      what: `scalable target ${names.resourceId}`,
      done: 'deregistered',
      run: () => clients.autoscaling.send(new DeregisterScalableTargetCommand(r.scalableTarget)),
    },
  ];
}
