/**
 * The W3C PLS format of a dictionary file, read with just enough XML of its own: linear, with the
 * line of every element (for errors).
 */
import { ipaToKokoro } from '../ipa.ts';
import { REGISTRY } from '../languages/index.ts';
import { MAX_DEPTH, collapse, quote, type FileEntries, type PronunciationReading } from './entries.ts';

const LEXEME_CHILDREN = new Set(['grapheme', 'phoneme', 'alias', 'example']);
const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * `<lexicon alphabet="ipa" | "x-kokoro" xml:lang="en-US">` of `<lexeme>`s, each with one or more
 * `<grapheme>` and one or more `<phoneme>` or `<alias>`: the first marked `prefer="true"`, else the
 * first, is read (PLS's rule), and a grapheme given twice keeps its first lexeme. IPA goes through
 * {@link ipaToKokoro}; a `<phoneme alphabet>` overrides the lexicon's, which defaults to `ipa`.
 */
export function parsePls(text: string, file: FileEntries): void {
  const root = readXml(text, (line, message) => file.fail(line, message));
  if (localName(root.name) !== 'lexicon')
    throw file.fail(root.line, `the root element should be <lexicon>, not <${root.name}>`);
  const tag = root.attrs.get('xml:lang');
  const lang = tag === undefined ? undefined : REGISTRY.parsePls(tag);
  if (lang === undefined)
    throw file.fail(
      root.line,
      `<lexicon> needs xml:lang ${REGISTRY.plsNames}; got ${tag ? quote(tag) : 'none'}`,
    );
  const seen = new Set<string>();
  for (const lexeme of root.children) {
    const kind = localName(lexeme.name);
    if (kind === 'meta' || kind === 'metadata') continue;
    if (kind !== 'lexeme') {
      file.problem(lexeme.line, `unexpected <${lexeme.name}>; a lexicon holds <lexeme> elements`);
      continue;
    }
    const of = (...names: string[]) => lexeme.children.filter((c) => names.includes(localName(c.name)));
    const other = lexeme.children.find((c) => !LEXEME_CHILDREN.has(localName(c.name)));
    if (other !== undefined) file.problem(other.line, `unexpected <${other.name}> in a <lexeme>`);
    const readings = of('phoneme', 'alias');
    const chosen = readings.find((r) => r.attrs.get('prefer') === 'true') ?? readings[0];
    if (of('grapheme').length === 0 || chosen === undefined) {
      file.problem(lexeme.line, `<lexeme> has no ${chosen ? '<grapheme>' : '<phoneme> or <alias>'}`);
      continue;
    }
    const written = collapse(chosen.text);
    let reading: PronunciationReading = { alias: written };
    let ipa: string | undefined;
    if (localName(chosen.name) === 'phoneme') {
      const alphabet = (chosen.attrs.get('alphabet') ?? root.attrs.get('alphabet') ?? 'ipa').toLowerCase();
      if (alphabet !== 'ipa' && alphabet !== 'x-kokoro') {
        file.problem(chosen.line, `alphabet ${quote(alphabet)} is not supported; use "ipa" or "x-kokoro"`);
        continue;
      }
      ipa = alphabet === 'ipa' ? written : undefined;
      reading = { phonemes: ipa === undefined ? written : collapse(ipaToKokoro(ipa, lang)) };
    }
    for (const grapheme of of('grapheme')) {
      const word = collapse(grapheme.text);
      if (seen.has(word)) continue;
      seen.add(word);
      if (!file.add(lang, word, [grapheme.line, chosen.line], reading, ipa)) return;
    }
  }
}

type XmlNode = { name: string; line: number; text: string };
type XmlElement = XmlNode & { attrs: Map<string, string>; children: XmlElement[] };

const XML_TAG = /<([^\s/>=<]+)((?:\s+[^\s/>=<]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>/y;
const XML_ATTR = /([^\s/>=<]+)\s*=\s*("[^"]*"|'[^']*')/g;
const XML_REF = /&(?:#x([0-9a-fA-F]{1,6})|#([0-9]{1,7})|([a-z]+));|&/g;
const XML_CLOSE = /<\/([^\s/>=<]+)\s*>/y;
const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** Elements, attributes, text, the five entities and character references, comments, `<?…?>`, CDATA. */
function readXml(src: string, fail: (line: number, message: string) => Error): XmlElement {
  let pos = 0;
  let line = 1;
  const advance = (to: number) => {
    for (; pos < to; pos++) if (src.charCodeAt(pos) === 10) line++;
  };
  const decode = (text: string) =>
    text.replace(XML_REF, (all, hex?: string, dec?: string, name?: string) => {
      if (name !== undefined && Object.hasOwn(XML_ENTITIES, name)) return XML_ENTITIES[name]!;
      const code = hex === undefined ? Number(dec) : parseInt(hex, 16);
      if (code > 0 && code <= 0x10ffff) return String.fromCodePoint(code);
      throw fail(line, `unknown entity ${quote(all)}; write & as &amp;`);
    });
  const skipPast = (end: string, what: string) => {
    const at = src.indexOf(end, pos);
    if (at < 0) throw fail(line, `${what} is not closed`);
    advance(at + end.length);
  };
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  while (pos < src.length) {
    const top = stack.at(-1);
    const lt = src.indexOf('<', pos);
    if (lt !== pos) {
      const text = src.slice(pos, lt < 0 ? src.length : lt);
      if (top !== undefined) top.text += decode(text);
      else if (text.trim() !== '') throw fail(line, 'text outside the root element');
      advance(pos + text.length);
    } else if (src.startsWith('<!--', pos)) skipPast('-->', 'a comment');
    else if (src.startsWith('<?', pos)) skipPast('?>', 'a processing instruction');
    else if (src.startsWith('<![CDATA[', pos)) {
      const end = src.indexOf(']]>', pos);
      if (top === undefined || end < 0) throw fail(line, 'CDATA outside an element, or not closed');
      top.text += src.slice(pos + 9, end);
      advance(end + 3);
    } else if (src.startsWith('<!', pos)) {
      const end = src.indexOf('>', pos);
      if (end < 0 || src.slice(pos, end).includes('['))
        throw fail(line, 'a DOCTYPE with declarations is not supported');
      advance(end + 1);
    } else if (src.startsWith('</', pos)) {
      XML_CLOSE.lastIndex = pos;
      if (top === undefined) throw fail(line, 'a closing tag without an open element');
      if (XML_CLOSE.exec(src)?.[1] !== top.name)
        throw fail(line, `expected </${top.name}> (opened at line ${top.line})`);
      stack.pop();
      advance(XML_CLOSE.lastIndex);
    } else {
      XML_TAG.lastIndex = pos;
      const tag = XML_TAG.exec(src);
      if (tag === null) throw fail(line, 'a malformed tag: expected <name attribute="value" …>');
      const element: XmlElement = { name: tag[1]!, attrs: new Map(), children: [], line, text: '' };
      for (const [, name, value] of tag[2]!.matchAll(XML_ATTR))
        element.attrs.set(name!, decode(value!.slice(1, -1)));
      if (top !== undefined) top.children.push(element);
      else if (root === undefined) root = element;
      else throw fail(line, 'a second root element');
      if (tag[3] === '') stack.push(element);
      if (stack.length > MAX_DEPTH) throw fail(line, 'nested too deeply');
      advance(XML_TAG.lastIndex);
    }
  }
  const open = stack.at(-1);
  if (open !== undefined) throw fail(line, `<${open.name}> (line ${open.line}) is not closed`);
  if (root === undefined) throw fail(line, 'no <lexicon> element');
  return root;
}
