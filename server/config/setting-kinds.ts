/**
 * The kinds of setting that `settings.ts` is a table of: how each reads its variable's text, what
 * it says when the text is wrong, and how it writes a value back (for docs/configuration.md and the tests).
 * Each kind's builder keeps the field an entry fills and the type of value it yields, so the
 * configuration's type is computed from the table (`ConfigOf`) instead of written beside it.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** The field a setting fills; `undefined` for a setting read before the configuration is. */
export type Key = string | undefined;

/** What a computed default may look at: the machine and the other settings. */
export interface Scope {
  /** Cores this process may use (`os.availableParallelism()`). */
  readonly cores: number;
  /** Another setting's value, read when first asked for, so the table's order does not matter. */
  get<V>(setting: Common<Key, V>): V;
}

/** A default worked out at startup, with the rule as docs/configuration.md shows it. */
export interface Computed<V> {
  /** Markdown, e.g. "`min(2, cores)`". */
  readonly doc: string;
  compute(scope: Scope): V;
}

interface Common<K extends Key, V> {
  /** The environment variable. */
  readonly name: string;
  /** The field it fills; none for a setting that is read before the configuration is. */
  readonly key: K;
  /** The value when the variable is unset or blank; `undefined` (text only): the field may be unset. */
  readonly default: V | Computed<V>;
  /** Said after the default in docs/configuration.md (markdown), e.g. "`true` in the images". */
  readonly note?: string;
  /** What it does and why, a sentence or two of markdown; figures belong in the docs pages. */
  readonly description: string;
}

export interface IntSetting<K extends Key = Key> extends Common<K, number> {
  readonly kind: 'int';
  readonly min: number;
  readonly max: number;
  /** `auto` is accepted too, and means the default. */
  readonly auto?: boolean;
}

export interface BoolSetting<K extends Key = Key> extends Common<K, boolean> {
  readonly kind: 'bool';
}

export interface OneOfSetting<K extends Key = Key, V extends string = string> extends Common<K, V> {
  readonly kind: 'oneOf';
  /** Lower case: a value is matched after trimming and lower-casing. */
  readonly values: readonly V[];
}

/** Free text, trimmed. */
export interface TextSetting<K extends Key = Key, V extends string | undefined = string | undefined>
  extends Common<K, V> {
  readonly kind: 'text';
}

/** Comma-separated items, trimmed, empty ones dropped. */
export interface ListSetting<K extends Key = Key> extends Common<K, readonly string[]> {
  readonly kind: 'list';
}

/** A value with a grammar of its own. */
export interface CustomSetting<K extends Key = Key, V = unknown> extends Common<K, V> {
  readonly kind: 'custom';
  /** The value, or every problem as a whole sentence naming the variable. */
  parse(raw: string): Parsed<V>;
  /** A value as the variable would hold it. */
  format(value: V): string;
}

export type Setting = IntSetting | BoolSetting | OneOfSetting | TextSetting | ListSetting | CustomSetting;

/** The type of value a setting yields. */
export type ValueOf<S> = S extends Common<Key, infer V> ? V : never;

/** The configuration a table fills: each field the value of the settings that fill it. */
export type ConfigOf<S extends Setting> = {
  readonly [E in S as E['key'] & string]: ValueOf<E>;
};

// The builders: each entry's kind gives the type of its value; the field it fills is kept as a
// literal, so that `ConfigOf` can name it.
type Spec<S> = Omit<S, 'kind'>;

export const int = <const K extends Key>(s: Spec<IntSetting<K>>): IntSetting<K> => ({ kind: 'int', ...s });

export const bool = <const K extends Key>(s: Spec<BoolSetting<K>>): BoolSetting<K> => ({
  kind: 'bool',
  ...s,
});

export const oneOf = <const K extends Key, const V extends string>(
  s: Omit<Spec<OneOfSetting<K, V>>, 'default'> & { readonly default: NoInfer<V> | Computed<NoInfer<V>> },
): OneOfSetting<K, V> => ({ kind: 'oneOf', ...s });

/** Free text; with no default (`undefined`), its field may be unset. */
export function text<const K extends Key>(
  s: Omit<Spec<TextSetting<K, string>>, 'default'> & { readonly default: undefined },
): TextSetting<K, string | undefined>;
export function text<const K extends Key>(s: Spec<TextSetting<K, string>>): TextSetting<K, string>;
export function text<const K extends Key>(s: Spec<TextSetting<K>>): TextSetting<K> {
  return { kind: 'text', ...s };
}

export const list = <const K extends Key>(s: Spec<ListSetting<K>>): ListSetting<K> => ({
  kind: 'list',
  ...s,
});

/** Its value's type is what `parse` yields. */
export const custom = <const K extends Key, V>(
  s: Omit<Spec<CustomSetting<K, V>>, 'default' | 'format'> & {
    readonly default: NoInfer<V> | Computed<NoInfer<V>>;
    format(value: NoInfer<V>): string;
  },
): CustomSetting<K, V> => ({ kind: 'custom', ...s });

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
export function parseValue(setting: Setting, raw: string): Parsed<unknown> {
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

export function isComputed<V>(value: V | Computed<V>): value is Computed<V> {
  return typeof value === 'object' && value !== null && typeof (value as Computed<V>).compute === 'function';
}

/**
 * Reads one setting's variable from `env`. A computed default needs the scope of the other settings;
 * a setting read on its own (before the configuration, as the allocator's is) has a plain one.
 */
export function readSetting<V>(
  setting: Setting & { readonly default: V | Computed<V> },
  env: Env,
  scope?: Scope,
): Reading<V> {
  const fallback = (): V => {
    const initial: V | Computed<V> = setting.default;
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
export function formatValue(setting: Setting, value: unknown): string {
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
