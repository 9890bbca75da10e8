/** The configuration table of docs/configuration.md, written from the settings table (server/config/settings.ts). */
import { formatValue, isComputed, type Setting } from '../../server/config/setting-kinds.ts';
import { SETTINGS } from '../../server/config/settings.ts';
import { markdownTable } from './stats.ts';

const code = (text: string): string => `\`${text}\``;

/** The default as docs/configuration.md shows it: the rule when it is computed, `unset` when there is none. */
export function defaultCell(setting: Setting): string {
  const shown = isComputed(setting.default)
    ? setting.default.doc
    : formatValue(setting, setting.default) === ''
      ? 'unset'
      : code(formatValue(setting, setting.default));
  return setting.note === undefined ? shown : `${shown} (${setting.note})`;
}

/** The description, with the bounds or the choices the value must keep to. */
export function meaningCell(setting: Setting): string {
  switch (setting.kind) {
    case 'int':
      return `${setting.description} (${setting.auto ? `${code('auto')} or ` : ''}${setting.min} to ${setting.max})`;
    case 'oneOf':
      return `${setting.description}; one of ${setting.values.map(code).join(', ')}`;
    default:
      return setting.description;
  }
}

/** Markdown: variable, default, meaning; one row per setting, in the table's order. */
export function configTable(settings: readonly Setting[] = SETTINGS): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  return markdownTable(
    ['variable', 'default', 'meaning'],
    settings.map((s) => [code(s.name), cell(defaultCell(s)), cell(meaningCell(s))]),
  );
}
