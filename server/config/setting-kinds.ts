/**
 * The kinds of setting that `settings.ts` is a table of: how each reads its variable's text, what
 * it says when the text is wrong, and how it writes a value back (for the README and the tests).
 * Generic over the record the settings fill (`C`), so this file needs nothing else of the server.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** What a computed default may look at: the machine and the other settings. */
export interface Scope<C> {
  /** Cores this process may use (`os.availableParallelism()`). */
  readonly cores: number;
  /** Another field's value, read when first asked for, so the table's order does not matter. */
  get<K extends keyof C>(key: K): C[K];
  /** The variable `name`, which fills the same field (for one that, when set, wins over another). */
  variable<K extends keyof C>(name: string, key: K): C[K];
}

/** A default worked out at startup, with the rule as the README shows it. */
export interface Computed<C, V> {
  /** Markdown, e.g. "`min(2, cores)`". */
  readonly doc: string;
  compute(scope: Scope<C>): V;
}

interface Common<C, K, V> {
  /** The environment variable. */
  readonly name: string;
  /** The field it fills; none for a setting that is read before the configuration is. */
  readonly key: K;
  /** The value when the variable is unset or blank. */
  readonly default: V | Computed<C, V>;
  /** Said after the default in the README (markdown), e.g. "`true` in the images". */
  readonly note?: string;
  /** What it does and why, a sentence or two of markdown; figures belong in the README's sections. */
  readonly description: string;
}

export interface IntSetting<C, K = keyof C | undefined> extends Common<C, K, number> {
  readonly kind: 'int';
  readonly min: number;
  readonly max: number;
  /** `auto` is accepted too, and means the default. */
  readonly auto?: boolean;
}

export interface BoolSetting<C, K = keyof C | undefined> extends Common<C, K, boolean> {
  readonly kind: 'bool';
}

export interface OneOfSetting<C, K = keyof C | undefined, V extends string = string> extends Common<C, K, V> {
  readonly kind: 'oneOf';
  /** Lower case: a value is matched after trimming and lower-casing. */
  readonly values: readonly V[];
}

/** Free text, trimmed. */
export interface TextSetting<C, K = keyof C | undefined, V extends string | undefined = string | undefined>
  extends Common<C, K, V> {
  readonly kind: 'text';
}

/** Comma-separated items, trimmed, empty ones dropped. */
export interface ListSetting<C, K = keyof C | undefined> extends Common<C, K, readonly string[]> {
  readonly kind: 'list';
}

/** A value with a grammar of its own. */
export interface CustomSetting<C, K = keyof C | undefined, V = unknown> extends Common<C, K, V> {
  readonly kind: 'custom';
  /** The value, or every problem as a whole sentence naming the variable. */
  parse(raw: string): Parsed<V>;
  /** A value as the variable would hold it. */
  format(value: V): string;
}

export type Setting<C> =
  | IntSetting<C>
  | BoolSetting<C>
  | OneOfSetting<C>
  | TextSetting<C>
  | ListSetting<C>
  | CustomSetting<C>;

export type Parsed<V> = { readonly value: V } | { readonly problems: readonly string[] };

/** A variable as read: its value (the default when unset, or when what is set is wrong) and the problems. */
export interface Reading<V> {
  readonly value: V;
  readonly problems: readonly string[];
}

/** `NAME="raw" should …`: how every problem with a value starts. */
export function problem(name: string, raw: string, should: string): string {
  return `${name}=${JSON.stringify(raw)} ${should}`;
}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/** Parses the text of a variable that is set (not blank). */
export function parseValue<C>(setting: Setting<C>, raw: string): Parsed<unknown> {
  const refuse = (should: string): Parsed<never> => ({ problems: [problem(setting.name, raw, should)] });
  const text = raw.trim();
  switch (setting.kind) {
    case 'int': {
      const value = Number(raw);
      if (Number.isInteger(value) && value >= setting.min && value <= setting.max) return { value };
      const range = `a whole number from ${setting.min} to ${setting.max}`;
      return refuse(`should be ${setting.auto ? `auto or ${range}` : range}`);
    }
    case 'bool':
      if (TRUE.includes(text.toLowerCase())) return { value: true };
      if (FALSE.includes(text.toLowerCase())) return { value: false };
      return refuse('should be true or false');
    case 'oneOf':
      if (setting.values.includes(text.toLowerCase())) return { value: text.toLowerCase() };
      return refuse(`should be one of: ${setting.values.join(', ')}`);
    case 'text':
      return { value: text };
    case 'list':
      return { value: listItems(text) };
    case 'custom':
      return setting.parse(raw);
    default:
      return unknownKind(setting);
  }
}

/** A kind outside the union: a compile error where it is built, and this where it is read anyway. */
function unknownKind(setting: never): never {
  throw new Error(`no kind of setting is called ${JSON.stringify((setting as { kind: unknown }).kind)}`);
}

/** Comma-separated items, trimmed, empty ones dropped. */
export function listItems(raw: string): string[] {
  return raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** Absent or blank: the default applies. */
function isUnset(raw: string | undefined): raw is undefined {
  return raw === undefined || raw.trim() === '';
}

export function isComputed<C, V>(value: V | Computed<C, V>): value is Computed<C, V> {
  return (
    typeof value === 'object' && value !== null && typeof (value as Computed<C, V>).compute === 'function'
  );
}

/**
 * Reads one setting's variable from `env`. A computed default needs the scope of the other settings;
 * a setting read on its own (before the configuration, as the allocator's is) has a plain one.
 */
export function readSetting<C, V>(
  setting: Setting<C> & { readonly default: V | Computed<C, V> },
  env: Env,
  scope?: Scope<C>,
): Reading<V> {
  const fallback = (): V => {
    const initial: V | Computed<C, V> = setting.default;
    if (!isComputed(initial)) return initial;
    if (scope === undefined) throw new Error(`${setting.name}'s default is computed from other settings`);
    return initial.compute(scope);
  };
  const raw = env[setting.name];
  if (isUnset(raw)) return { value: fallback(), problems: [] };
  if (setting.kind === 'int' && setting.auto && raw.trim().toLowerCase() === 'auto') {
    return { value: fallback(), problems: [] };
  }
  const parsed = parseValue(setting, raw);
  return 'problems' in parsed
    ? { value: fallback(), problems: parsed.problems }
    : { value: parsed.value as V, problems: [] };
}

/** A value as the variable would hold it: `npm run docs:config` shows defaults so. */
export function formatValue<C>(setting: Setting<C>, value: unknown): string {
  switch (setting.kind) {
    case 'int':
    case 'bool':
      return String(value);
    case 'oneOf':
    case 'text':
      return (value as string | undefined) ?? '';
    case 'list':
      return (value as readonly string[]).join(',');
    case 'custom':
      return setting.format(value);
    default:
      return unknownKind(setting);
  }
}
