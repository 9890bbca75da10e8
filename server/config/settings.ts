/**
 * Every setting the server takes from the environment, in one table: the variable, the `Config`
 * field it fills, its kind and bounds, its default and what it is for. The entries live in their
 * groups (settings-*.ts); this is their order, that of docs/configuration.md. `parseConfig` (config.ts) reads the
 * table; `npm run docs:config` writes docs/configuration.md's table from it.
 */
import { MODEL, SCHEDULING } from './settings-engine.ts';
import { CAPACITY, LIMITS } from './settings-limits.ts';
import { LOGGING } from './settings-logging.ts';
import { ACCESS, LISTENING } from './settings-server.ts';
import type { ConfigOf } from './setting-kinds.ts';

/**
 * The settings, in the order of docs/configuration.md. When several variables fill one field, the first in the
 * table fills it and its default reads the next (`SAGEMAKER_BIND_TO_PORT`, unset, is `PORT`).
 */
export const SETTINGS = [
  ...LISTENING,
  ...MODEL,
  ...LIMITS,
  ...SCHEDULING,
  ...CAPACITY,
  ...ACCESS,
  ...LOGGING,
] as const;

/**
 * The configuration: one field for each key in the table, of the type its entry's kind yields
 * (`string | undefined` for text with no default). Nothing else declares a field.
 */
export type Config = ConfigOf<(typeof SETTINGS)[number]>;
