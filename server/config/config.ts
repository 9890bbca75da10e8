/**
 * Configuration: read from the environment once, validated, frozen. No other module reads
 * `process.env`; everything else receives a `Config`. What each variable means, its kind and its
 * default are in the table of `settings.ts`; this file reads that table.
 */
import { availableParallelism } from 'node:os';
import type { EngineOptions } from '../../model/engine.ts';
import { ortSeverity } from '../observability/logger.ts';
import { readSetting, type Scope, type Setting } from './setting-kinds.ts';
import { SETTINGS, type Config } from './settings.ts';

export type { Config } from './settings.ts';

/**
 * The engine's options a configuration implies (callers add their event handlers). The engine
 * names each option as the field that fills it, so the configuration goes whole; only the log
 * level and the longest pause change units here.
 */
export function engineOptions(config: Config): EngineOptions {
  return {
    ...config,
    logSeverity: ortSeverity(config.logLevel),
    markupLimits: { maxPauseMs: config.maxPauseS * 1000 },
  };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

const TABLE: readonly Setting[] = SETTINGS;

/** The setting that fills each field: the first in the table (a later one is its default's fallback). */
const FILLS = new Map<keyof Config, Setting>();
for (const setting of TABLE) {
  const key = setting.key as keyof Config | undefined;
  if (key !== undefined && !FILLS.has(key)) FILLS.set(key, setting);
}

/**
 * Validates the environment into a frozen Config. Collects every problem before throwing so that
 * a misconfigured container says everything that is wrong in one start.
 */
export function parseConfig(env: Env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const values = new Map<Setting, unknown>();
  const reading = new Set<Setting>();
  // Each variable is read once, when first needed: a default may depend on other settings.
  const read = (setting: Setting): unknown => {
    if (values.has(setting)) return values.get(setting);
    if (reading.has(setting)) throw new Error(`${setting.name}'s default depends on itself`);
    reading.add(setting);
    const { value, problems: wrong } = readSetting(setting, env, scope);
    problems.push(...wrong);
    values.set(setting, value);
    return value;
  };
  const scope: Scope = {
    cores: availableParallelism(),
    get: <V>(setting: { readonly name: string }) => {
      const entry = TABLE.find((s) => s === setting);
      if (entry === undefined) throw new Error(`${setting.name} is not in the settings table`);
      return read(entry) as V;
    },
  };

  const fields = Object.fromEntries([...FILLS].map(([key, setting]) => [key, read(setting)]));
  // Settings read before the configuration (KOKORO_MALLOC_PIN) are validated here all the same.
  for (const setting of TABLE) if (setting.key === undefined) read(setting);

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze({ ...(fields as unknown as Config), ...overrides });
}
