/**
 * The English tokenizer (model/text/en/tokenizer.ts) against spaCy's. The inputs, and the counts and
 * tokens they assert, come from explosion/spaCy's own tests: `spacy/tests/lang/en/test_exceptions.py`,
 * `test_prefix_suffix_infix.py`, `test_punct.py`, `test_text.py`, `test_tokenizer.py`,
 * `test_indices.py`, and `spacy/tests/tokenizer/test_exceptions.py`, `test_tokenizer.py` (URLs are in
 * en-tokenizer-urls.test.ts, whitespace in en-tokenizer-whitespace.test.ts, properties on random text
 * and linear time in en-tokenizer-properties.test.ts). Where those tests check only a count or one token, the full
 * lists here are what spaCy's algorithm (tokenizer.pyx, transcribed to Python) gives on spaCy's own
 * data files with Python's `re` (spaCy itself could not be installed); the transcription and this
 * module agreed on hundreds of thousands of random strings.
 */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../model/text/en/tokenizer.ts';

const texts = (text: string): string[] => tokenize(text).map((t) => t.text);

/** `spacy/tests/lang/en/test_exceptions.py`: contractions, abbreviations, times. */
const EXCEPTIONS = new Map<string, string[]>([
  ["don't giggle", ['do', "n't", 'giggle']],
  ["i said don't!", ['i', 'said', 'do', "n't", '!']],
  ["`ain't", ['`', 'ai', "n't"]],
  ['"isn\'t', ['"', 'is', "n't"]],
  ["can't!", ['ca', "n't", '!']],
  ["Robin's", ['Robin', "'s"]],
  ["Alexis's", ['Alexis', "'s"]],
  ["schools'", ['schools', "'"]],
  ["Alexis'", ['Alexis', "'"]],
  ["'em", ["'em"]],
  ["nothin'", ["nothin'"]],
  ["ol'", ["ol'"]],
  ["we'll", ['we', "'ll"]],
  ["You'll", ['You', "'ll"]],
  ["there'll", ['there', "'ll"]],
  ["this'll", ['this', "'ll"]],
  ["those'll", ['those', "'ll"]],
  ["can't", ['ca', "n't"]],
  ["Can't", ['Ca', "n't"]],
  ["ain't", ['ai', "n't"]],
  ["Ain't", ['Ai', "n't"]],
  ["I'll", ['I', "'ll"]],
  ["You'd", ['You', "'d"]],
  ["He'll", ['He', "'ll"]],
  ["She'd", ['She', "'d"]],
  ["It'll", ['It', "'ll"]],
  ["We'd", ['We', "'d"]],
  ["They'll", ['They', "'ll"]],
  ['Ill', ['Ill']],
  ['ill', ['ill']],
  ['Hell', ['Hell']],
  ['hell', ['hell']],
  ['Well', ['Well']],
  ['well', ['well']],
  ["We've", ['We', "'ve"]],
  ["`We've", ['`', 'We', "'ve"]],
  ["couldn't", ['could', "n't"]],
  ["couldn't)", ['could', "n't", ')']],
  ['e.g.', ['e.g.']],
  ['p.m.', ['p.m.']],
  ['Jan.', ['Jan.']],
  ['Dec.', ['Dec.']],
  ['Inc.', ['Inc.']],
  ["It's mediocre i.e. bad.", ['It', "'s", 'mediocre', 'i.e.', 'bad', '.']],
  ['1am', ['1', 'am']],
  ['12a.m.', ['12', 'a.m.']],
  ['11p.m.', ['11', 'p.m.']],
  ['4pm', ['4', 'pm']],
  ["I'm", ['I', "'m"]],
  ["shan't", ['sha', "n't"]],
  [
    "Many factors cause cancer 'cause it is complex",
    ['Many', 'factors', 'cause', 'cancer', "'cause", 'it', 'is', 'complex'],
  ],
  ["'cuz", ["'cuz"]],
]);

/** `spacy/tests/lang/en/test_prefix_suffix_infix.py` and `test_punct.py`. */
const AFFIXES = new Map<string, string[]>([
  ['(can)', ['(', 'can', ')']],
  ["(can't", ['(', 'ca', "n't"]],
  ["can't)", ['ca', "n't", ')']],
  ["(can't)", ['(', 'ca', "n't", ')']],
  ["(can't?)", ['(', 'ca', "n't", '?', ')']],
  ['U.S.', ['U.S.']],
  ['us.', ['us', '.']],
  ['(U.S.', ['(', 'U.S.']],
  ['U.S.)', ['U.S.', ')']],
  ['(U.S.)', ['(', 'U.S.', ')']],
  ['(U.S.?)', ['(', 'U.S.', '?', ')']],
  ['best-known', ['best', '-', 'known']],
  ['0.1-13.5', ['0.1', '-', '13.5']],
  ['0.0-0.1', ['0.0', '-', '0.1']],
  ['103.27-300', ['103.27', '-', '300']],
  ['best.Known', ['best', '.', 'Known']],
  ['Hello.World', ['Hello', '.', 'World']],
  ['Hello,world', ['Hello', ',', 'world']],
  ['one,two', ['one', ',', 'two']],
  ['best...Known', ['best', '...', 'Known']],
  ['best...known', ['best', '...', 'known']],
  [
    'No decent--let alone well-bred--people.',
    ['No', 'decent', '--', 'let', 'alone', 'well', '-', 'bred', '--', 'people', '.'],
  ],
  ['Today is Tuesday.Mr.', ['Today', 'is', 'Tuesday', '.', 'Mr.']],
  ['_MATH_', ['_', 'MATH', '_']],
  ['_MATH_.', ['_', 'MATH', '_', '.']],
  ['(', ['(']],
  ['((', ['(', '(']],
  ['<', ['<']],
  ['(Hello', ['(', 'Hello']],
  ['[Hello', ['[', 'Hello']],
  ['{Hello', ['{', 'Hello']],
  ['*Hello', ['*', 'Hello']],
  ['Hello)', ['Hello', ')']],
  ['Hello]', ['Hello', ']']],
  ['Hello}', ['Hello', '}']],
  ['Hello*', ['Hello', '*']],
  ['(`Hello', ['(', '`', 'Hello']],
  ["Hello)'", ['Hello', ')', "'"]],
  ['(((Hello', ['(', '(', '(', 'Hello']],
  ['Hello)))', ['Hello', ')', ')', ')']],
  ["'The", ["'", 'The']],
  ["Hello''", ['Hello', "''"]],
  ["''", ["''"]],
  ['(Hello)', ['(', 'Hello', ')']],
  ["`(Hello)'", ['`', '(', 'Hello', ')', "'"]],
  [
    '(And a 6a.m. run through Washington Park).',
    ['(', 'And', 'a', '6', 'a.m.', 'run', 'through', 'Washington', 'Park', ')', '.'],
  ],
]);

/** `spacy/tests/lang/en/test_text.py`, `test_tokenizer.py` and `test_indices.py`. */
const TEXTS = new Map<string, string[]>([
  ['The U.S. Army likes Shock and Awe.', ['The', 'U.S.', 'Army', 'likes', 'Shock', 'and', 'Awe', '.']],
  [
    'U.N. regulations are not a part of their concern.',
    ['U.N.', 'regulations', 'are', 'not', 'a', 'part', 'of', 'their', 'concern', '.'],
  ],
  ["“Isn't it?”", ['“', 'Is', "n't", 'it', '?', '”']],
  [
    'Yes! "I\'d rather have a walk", Ms. Comble sighed. ',
    ['Yes', '!', '"', 'I', "'d", 'rather', 'have', 'a', 'walk', '"', ',', 'Ms.', 'Comble', 'sighed', '.'],
  ],
  [
    "'Me too!', Mr. P. Delaware cried. ",
    ["'", 'Me', 'too', '!', "'", ',', 'Mr.', 'P.', 'Delaware', 'cried', '.'],
  ],
  ['They ran about 10km.', ['They', 'ran', 'about', '10', 'km', '.']],
  [
    'But then the 6,000-year ice age came...',
    ['But', 'then', 'the', '6,000', '-', 'year', 'ice', 'age', 'came', '...'],
  ],
  ['10,000', ['10,000']],
  ['10,00', ['10,00']],
  ['999.0', ['999.0']],
  ['1/2', ['1/2']],
  ['$45...............Asking', ['$', '45', '...............', 'Asking']],
  ['7am', ['7', 'am']],
  ['11p.m.', ['11', 'p.m.']],
  ['3/4/2012', ['3/4/2012']],
  ['01/12/1900', ['01/12/1900']],
  ['We were scared', ['We', 'were', 'scared']],
  ['We Were Scared', ['We', 'Were', 'Scared']],
  ['Shell', ['Shell']],
  ['shell', ['shell']],
  ['Shed', ['Shed']],
  ['shed', ['shed']],
  ['want/need', ['want', '/', 'need']],
  ['test@example.com', ['test@example.com']],
  ['john.doe@example.co.uk', ['john.doe@example.co.uk']],
  ["would've", ['would', "'ve"]],
  ["don't", ['do', "n't"]],
  ['don’t', ['do', 'n’t']],
  ["I'd", ['I', "'d"]],
  ['I’d', ['I', '’d']],
  ['theses', ['theses']],
  ['thisre', ['thisre']],
  [
    'I went for 40.3, and got home by 10.0.',
    ['I', 'went', 'for', '40.3', ',', 'and', 'got', 'home', 'by', '10.0', '.'],
  ],
  ["No--don't see", ['No', '--', "don't", 'see']],
  ["A'B C", ["A'B", 'C']],
  ['A-B', ['A', '-', 'B']],
  ['to walk, do foo', ['to', 'walk', ',', 'do', 'foo']],
  ['Tom (D., Ill.)!', ['Tom', '(', 'D.', ',', 'Ill.', ')', '!']],
  ['Datum:2014-06-02\nDokument:76467', ['Datum:2014', '-', '06', '-', '02', '\n', 'Dokument:76467']],
]);

/** `spacy/tests/tokenizer/test_exceptions.py` and `test_tokenizer.py`: emoticons, emoji, degrees, URLs, e-mail. */
const BASE = new Map<string, string[]>([
  ['108)', ['108', ')']],
  ['XDN', ['XDN']],
  ['can you still dunk?🍕🍔😵LOL', ['can', 'you', 'still', 'dunk?', '🍕', '🍔', '😵', 'LOL']],
  ['i💙you', ['i', '💙', 'you']],
  ['🤘🤘yay!', ['🤘', '🤘', 'yay', '!']],
  ['°C.', ['°', 'C', '.']],
  ['°f.', ['°', 'f', '.']],
  ['°K.', ['°', 'K', '.']],
  ['Lorem, ipsum.', ['Lorem', ',', 'ipsum', '.']],
  ['Lorem, (ipsum).', ['Lorem', ',', '(', 'ipsum', ')', '.']],
  ['Lorem ipsum: 1984.', ['Lorem', 'ipsum', ':', '1984', '.']],
  ['google.com', ['google.com']],
  ['python.org', ['python.org']],
  ['spacy.io', ['spacy.io']],
  ['explosion.ai', ['explosion.ai']],
  ['http://www.google.com', ['http://www.google.com']],
  ['NASDAQ:GOOG', ['NASDAQ', ':', 'GOOG']],
  ['hello123@example.com', ['hello123@example.com']],
  ['hi+there@gmail.it', ['hi+there@gmail.it']],
  ['matt@explosion.ai', ['matt@explosion.ai']],
  ['www.red-stars.com', ['www.red-stars.com']],
  ['mailto:foo.bar@baz.com', ['mailto:foo.bar@baz.com']],
  ['(www.red-stars.com)', ['(', 'www.red-stars.com', ')']],
  ['(mailto:foo.bar@baz.com)', ['(', 'mailto:foo.bar@baz.com', ')']],
]);

/** `spacy/tests/tokenizer/test_urls.py`: `URLS_SHOULD_MATCH` then `URLS_SHOULD_NOT_MATCH`, as whole tokens go. */

const MISAKI = new Map<string, string[]>([
  ["don't", ['do', "n't"]],
  ['U.S.', ['U.S.']],
  ['$5', ['$', '5']],
  ['(hello)', ['(', 'hello', ')']],
  ["can't", ['ca', "n't"]],
  ['gonna', ['gon', 'na']],
  ['etc.', ['etc', '.']],
  ['Mr.', ['Mr.']],
  ['hello.', ['hello', '.']],
  ['3rd', ['3rd']],
  ['co-operate', ['co', '-', 'operate']],
  ['10km', ['10', 'km']],
  ['e-mail', ['e', '-', 'mail']],
  ['See https://example.com/a?b=1.', ['See', 'https://example.com/a?b=1', '.']],
  ['Mail me: a.b@c.org!', ['Mail', 'me', ':', 'a.b@c.org', '!']],
  [':) :-( <3 ^_^', [':)', ':-(', '<3', '^_^']],
  ['Wait...', ['Wait', '...']],
  ['Wait... what?', ['Wait', '...', 'what', '?']],
  ['Well…', ['Well', '…']],
  ['"Hi," she said.', ['"', 'Hi', ',', '"', 'she', 'said', '.']],
  ['‘Hi’ and “bye”', ['‘', 'Hi', '’', 'and', '“', 'bye', '”']],
  ['word—word', ['word', '—', 'word']],
  ['—Yes', ['—', 'Yes']],
  ['Yes—', ['Yes', '—']],
  ['Hi:)', ['Hi', ':)']],
  ['C++', ['C++']],
  ["I'm gonna go, y'all.", ['I', "'m", 'gon', 'na', 'go', ',', "y'", 'all', '.']],
  ["Let's", ['Let', "'s"]],
  ["c'mon", ["c'm", 'on']],
  ['cannot', ['can', 'not']],
  ["o'clock", ["o'clock"]],
  ['5:30pm', ['5:30pm']],
  ['3pm', ['3', 'pm']],
  ['2.5kg', ['2.5', 'kg']],
  ['US$10', ['US$', '10']],
  ['°C', ['°', 'C']],
  ['+1', ['+1']],
  ['1+1', ['1', '+', '1']],
  ['x^2', ['x^2']],
]);
/**
 * `spacy/tests/tokenizer/test_whitespace.py` and issues #351, #792, #859: one plain space after a token is
 * its whitespace; more spaces, and any other whitespace, are tokens.
 */
const QUIRKS = new Map<string, string[]>([
  // Not an exception: the period goes.
  ['etc.', ['etc', '.']],
  // Exceptions without the apostrophe split ordinary-looking words.
  ['id', ['i', 'd']],
  ['Id', ['I', 'd']],
  ['hes', ['he', 's']],
  ['wont', ['wo', 'nt']],
  ['cant', ['ca', 'nt']],
  ['Ima', ['I', 'm', 'a']],
  ['its', ['its']],
  // Pieces split off at infixes are not looked up as exceptions (spaCy issue #10086).
  ["No--don't", ['No', '--', "don't"]],
  // The special-case pass matches token sequences across spaces: `(:` over "( :" keeps `:)` apart.
  [':)l', [':)', 'l']],
  ['( :)l', ['(', ':', ')', 'l']],
  // Suffixes first: the emoji, then the question mark; inside a longer run the emoji are infixes.
  ['dunk?🍕', ['dunk', '?', '🍕']],
  ['dunk?🍕LOL', ['dunk?', '🍕', 'LOL']],
  // One capital and a period is no suffix; a lower-case letter and a period is an exception.
  ['I.', ['I.']],
  ['a.', ['a.']],
]);

const TABLES: Record<string, Map<string, string[]>> = {
  exceptions: EXCEPTIONS,
  'prefixes, suffixes, infixes': AFFIXES,
  texts: TEXTS,
  'base exceptions and URLs': BASE,
  'misaki cases': MISAKI,
  'spaCy quirks': QUIRKS,
};

describe.each(Object.entries(TABLES))('tokenize: %s', (_name, table) => {
  for (const [input, expected] of table) {
    it(JSON.stringify(input), () => expect(texts(input)).toEqual(expected));
  }
});
