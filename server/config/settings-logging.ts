/** The settings of what the server reports: its log and its CloudWatch metrics. */
import { parseDimensions } from '../observability/emf.ts';
import { LOG_LEVELS } from '../observability/logger.ts';
import { bool, custom, int, oneOf, problem, type Parsed } from './setting-kinds.ts';

/** The CloudWatch namespace of the metrics unless one is named; the deploy tooling's alarms read it too. */
export const DEFAULT_EMF_NAMESPACE = 'KokoroTTS';

const METRICS_EMF_NAMESPACE = custom({
  name: 'METRICS_EMF_NAMESPACE',
  key: 'metricsEmfNamespace',
  default: DEFAULT_EMF_NAMESPACE,
  parse: (raw): Parsed<string> => {
    const value = raw.trim();
    return value.length > 255 || value.startsWith('AWS/')
      ? {
          problems: [
            problem('METRICS_EMF_NAMESPACE', raw, 'should be at most 255 characters and not start with AWS/'),
          ],
        }
      : { value };
  },
  format: (namespace) => namespace,
  description: 'their CloudWatch namespace',
});

export const LOGGING = [
  oneOf({
    name: 'LOG_LEVEL',
    key: 'logLevel',
    values: LOG_LEVELS,
    default: 'info',
    description: "pino level; ONNX Runtime's own log is kept to errors unless `debug`/`trace`",
  }),
  bool({
    name: 'METRICS_EMF',
    key: 'metricsEmf',
    default: false,
    note: '`true` in the images',
    description:
      'per-instance metrics as CloudWatch Embedded Metric Format lines on stdout (see [Autoscaling](deploy.md#autoscaling))',
  }),
  METRICS_EMF_NAMESPACE,
  custom({
    name: 'METRICS_EMF_DIMENSIONS',
    key: 'metricsEmfDimensions',
    default: { Service: 'kokoro-tts' },
    parse: (raw): Parsed<Readonly<Record<string, string>>> => {
      const dimensions = parseDimensions(raw);
      return 'problem' in dimensions
        ? { problems: [problem('METRICS_EMF_DIMENSIONS', raw, dimensions.problem)] }
        : { value: dimensions };
    },
    format: (dimensions) =>
      Object.entries(dimensions)
        .map(([name, value]) => `${name}=${value}`)
        .join(','),
    description:
      'their dimensions, `Name=Value,…` (the deploy tooling sets `EndpointName` and `VariantName`)',
  }),
  int({
    name: 'METRICS_EMF_INTERVAL_S',
    key: 'metricsEmfIntervalS',
    min: 1,
    max: 3600,
    default: 60,
    description: "how often they are written: latencies as every request's value, counts per interval",
  }),
] as const;
