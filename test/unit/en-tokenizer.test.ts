/**
 * The English tokenizer (model/text/en/tokenizer.ts) against spaCy's. The inputs, and the counts and
 * tokens they assert, come from explosion/spaCy's own tests: `spacy/tests/lang/en/test_exceptions.py`,
 * `test_prefix_suffix_infix.py`, `test_punct.py`, `test_text.py`, `test_tokenizer.py`,
 * `test_indices.py`, and `spacy/tests/tokenizer/test_exceptions.py`, `test_tokenizer.py`,
 * `test_urls.py`, `test_whitespace.py`. Where those tests check only a count or one token, the full
 * lists here are what spaCy's algorithm (tokenizer.pyx, transcribed to Python) gives on spaCy's own
 * data files with Python's `re` (spaCy itself could not be installed); the transcription and this
 * module agreed on hundreds of thousands of random strings.
 */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../model/text/en/tokenizer.ts';

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
const URLS = new Map<string, string[]>([
  ['http://foo.com/blah_blah', ['http://foo.com/blah_blah']],
  ['http://BlahBlah.com/Blah_Blah', ['http://BlahBlah.com/Blah_Blah']],
  ['http://foo.com/blah_blah/', ['http://foo.com/blah_blah/']],
  ['http://www.example.com/wpstyle/?p=364', ['http://www.example.com/wpstyle/?p=364']],
  [
    'https://www.example.com/foo/?bar=baz&inga=42&quux',
    ['https://www.example.com/foo/?bar=baz&inga=42&quux'],
  ],
  ['http://userid:password@example.com:8080', ['http://userid:password@example.com:8080']],
  ['http://userid:password@example.com:8080/', ['http://userid:password@example.com:8080/']],
  ['http://userid@example.com', ['http://userid@example.com']],
  ['http://userid@example.com/', ['http://userid@example.com/']],
  ['http://userid@example.com:8080', ['http://userid@example.com:8080']],
  ['http://userid@example.com:8080/', ['http://userid@example.com:8080/']],
  ['http://userid:password@example.com', ['http://userid:password@example.com']],
  ['http://userid:password@example.com/', ['http://userid:password@example.com/']],
  ['http://142.42.1.1/', ['http://142.42.1.1/']],
  ['http://142.42.1.1:8080/', ['http://142.42.1.1:8080/']],
  ['http://foo.com/blah_(wikipedia)#cite-1', ['http://foo.com/blah_(wikipedia)#cite-1']],
  ['http://foo.com/blah_(wikipedia)_blah#cite-1', ['http://foo.com/blah_(wikipedia)_blah#cite-1']],
  ['http://foo.com/unicode_(✪)_in_parens', ['http://foo.com/unicode_(✪)_in_parens']],
  ['http://foo.com/(something)?after=parens', ['http://foo.com/(something)?after=parens']],
  ['http://code.google.com/events/#&product=browser', ['http://code.google.com/events/#&product=browser']],
  ['http://j.mp', ['http://j.mp']],
  ['ftp://foo.bar/baz', ['ftp://foo.bar/baz']],
  ['http://foo.bar/?q=Test%20URL-encoded%20stuff', ['http://foo.bar/?q=Test%20URL-encoded%20stuff']],
  [
    "http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com",
    ["http://-.~_!$&'()*+,;=:%40:80%2f::::::@example.com"],
  ],
  ['http://1337.net', ['http://1337.net']],
  ['http://a.b-c.de', ['http://a.b-c.de']],
  ['http://223.255.255.254', ['http://223.255.255.254']],
  ['http://a.b--c.de/', ['http://a.b--c.de/']],
  ['ssh://login@server.com:12345/repository.git', ['ssh://login@server.com:12345/repository.git']],
  ['svn+ssh://user@ssh.yourdomain.com/path', ['svn+ssh://user@ssh.yourdomain.com/path']],
  [
    'chrome://extensions/?id=mhjfbmdgcfjbbpaeojofohoefgiehjai',
    ['chrome://extensions/?id', '=', 'mhjfbmdgcfjbbpaeojofohoefgiehjai'],
  ],
  [
    'chrome-extension://mhjfbmdgcfjbbpaeojofohoefgiehjai',
    ['chrome', '-', 'extension://mhjfbmdgcfjbbpaeojofohoefgiehjai'],
  ],
  ['http://foo.com/blah_blah_(wikipedia)', ['http://foo.com/blah_blah_(wikipedia', ')']],
  ['http://foo.com/blah_blah_(wikipedia)_(again)', ['http://foo.com/blah_blah_(wikipedia)_(again', ')']],
  ['http://www.foo.co.uk', ['http://www.foo.co.uk']],
  ['http://www.foo.co.uk/', ['http://www.foo.co.uk/']],
  ['http://www.foo.co.uk/blah/blah', ['http://www.foo.co.uk/blah/blah']],
  ['http://⌘.ws', ['http://⌘.ws']],
  ['http://⌘.ws/', ['http://⌘.ws/']],
  ['http://☺.damowmow.com/', ['http://☺.damowmow.com/']],
  ['http://✪df.ws/123', ['http://✪df.ws/123']],
  ['http://➡.ws/䨹', ['http://➡.ws/䨹']],
  ['http://مثال.إختبار', ['http://مثال.إختبار']],
  ['http://例子.测试', ['http://例子.测试']],
  ['http://उदाहरण.परीक्षा', ['http://उदाहरण.परीक्षा']],
  ['http://', ['http://']],
  ['http://.', ['http://.']],
  ['http://..', ['http://', '..']],
  ['http://../', ['http://', '..', '/']],
  ['http://?', ['http://', '?']],
  ['http://??', ['http://', '?', '?']],
  ['http://??/', ['http://??/']],
  ['http://#', ['http://', '#']],
  ['http://##', ['http://', '#', '#']],
  ['http://##/', ['http://##/']],
  ['http://foo.bar?q=Spaces should be encoded', ['http://foo.bar?q=Spaces', 'should', 'be', 'encoded']],
  ['//', ['//']],
  ['//a', ['//a']],
  ['///a', ['///a']],
  ['///', ['///']],
  ['http:///a', ['http:///a']],
  ['rdar://1234', ['rdar://1234']],
  ['h://test', ['h://test']],
  ['http:// shouldfail.com', ['http://', 'shouldfail.com']],
  [':// should fail', [':', '//', 'should', 'fail']],
  ['http://foo.bar/foo(bar)baz quux', ['http://foo.bar/foo(bar)baz', 'quux']],
  ['http://-error-.invalid/', ['http://-error-.invalid/']],
  ['http://a.b-.co', ['http://a.b-.co']],
  ['http://0.0.0.0', ['http://0.0.0.0']],
  ['http://10.1.1.0', ['http://10.1.1.0']],
  ['http://10.1.1.255', ['http://10.1.1.255']],
  ['http://224.1.1.1', ['http://224.1.1.1']],
  ['http://123.123.123', ['http://123.123.123']],
  ['http://3628126748', ['http://3628126748']],
  ['http://.www.foo.bar/', ['http://.www.foo.bar/']],
  ['http://.www.foo.bar./', ['http://.www.foo.bar./']],
  ['http://10.1.1.1', ['http://10.1.1.1']],
  ['NASDAQ:GOOG', ['NASDAQ', ':', 'GOOG']],
  ['http://-a.b.co', ['http://-a.b.co']],
  ['foo.com', ['foo.com']],
  ['http://1.1.1.1.1', ['http://1.1.1.1.1']],
  ['http://www.foo.bar./', ['http://www.foo.bar./']],
]);

/** Cases misaki's lexicon depends on (the contractions, currency, units, hyphens, URLs, emoticons, quotes, dashes). */
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
const WHITESPACE = new Map<string, [string, string][]>([
  [
    'lorem ipsum',
    [
      ['lorem', ' '],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem  ipsum',
    [
      ['lorem', ' '],
      [' ', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem ipsum  ',
    [
      ['lorem', ' '],
      ['ipsum', ' '],
      [' ', ''],
    ],
  ],
  [
    'lorem\nipsum',
    [
      ['lorem', ''],
      ['\n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem \nipsum',
    [
      ['lorem', ' '],
      ['\n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem  \nipsum',
    [
      ['lorem', ' '],
      [' \n', ''],
      ['ipsum', ''],
    ],
  ],
  [
    'lorem \n ipsum',
    [
      ['lorem', ' '],
      ['\n ', ''],
      ['ipsum', ''],
    ],
  ],
  [
    '   This is a cat.',
    [
      ['   ', ''],
      ['This', ' '],
      ['is', ' '],
      ['a', ' '],
      ['cat', ''],
      ['.', ''],
    ],
  ],
  [
    'This is a string ',
    [
      ['This', ' '],
      ['is', ' '],
      ['a', ' '],
      ['string', ' '],
    ],
  ],
  [
    'aaabbb@ccc.com\nThank you!',
    [
      ['aaabbb@ccc.com', ''],
      ['\n', ''],
      ['Thank', ' '],
      ['you', ''],
      ['!', ''],
    ],
  ],
  [
    'aaabbb@ccc.com \nThank you!',
    [
      ['aaabbb@ccc.com', ' '],
      ['\n', ''],
      ['Thank', ' '],
      ['you', ''],
      ['!', ''],
    ],
  ],
  [' ', [[' ', '']]],
  ['  ', [['  ', '']]],
  ['\n', [['\n', '']]],
  [
    'a\tb',
    [
      ['a', ''],
      ['\t', ''],
      ['b', ''],
    ],
  ],
  [
    'a \u00a0b',
    [
      ['a', ' '],
      ['\u00a0', ''],
      ['b', ''],
    ],
  ],
  [
    'Hi !',
    [
      ['Hi', ' '],
      ['!', ''],
    ],
  ],
  [
    '\u3000x',
    [
      ['\u3000', ''],
      ['x', ''],
    ],
  ],
  ['a\u200bb', [['a\u200bb', '']]],
  [
    'end. ',
    [
      ['end', ''],
      ['.', ' '],
    ],
  ],
  [
    "Don't go!",
    [
      ['Do', ''],
      ["n't", ' '],
      ['go', ''],
      ['!', ''],
    ],
  ],
]);
/** spaCy's own oddities, kept: misaki's lexicon was looked up with these tokens. */
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
  'URL lists': URLS,
  'misaki cases': MISAKI,
  'spaCy quirks': QUIRKS,
};

describe.each(Object.entries(TABLES))('tokenize: %s', (_name, table) => {
  for (const [input, expected] of table) {
    it(JSON.stringify(input), () => expect(texts(input)).toEqual(expected));
  }
});

describe('tokenize: whitespace', () => {
  for (const [input, expected] of WHITESPACE) {
    it(JSON.stringify(input), () => {
      expect(tokenize(input).map((t) => [t.text, t.whitespace])).toEqual(expected);
    });
  }

  it('returns no tokens for no text', () => expect(tokenize('')).toEqual([]));

  it('counts 76 tokens in the long text of test_text.py', () => {
    const text = `Tributes pour in for late British Labour Party leader

Tributes poured in from around the world Thursday
to the late Labour Party leader John Smith, who died earlier from a massive
heart attack aged 55.

In Washington, the US State Department issued a statement regretting "the
untimely death" of the rapier-tongued Scottish barrister and parliamentarian.

"Mr. Smith, throughout his distinguished`;
    expect(tokenize(text)).toHaveLength(76);
  });

  it('splits the emoticons of the Tweebo challenge (test_exceptions.py)', () => {
    const text = `:o :/ :'( >:o (: :) >.< XD -__- o.O ;D :-) @_@ :P 8D :1 >:( :D =| :> ....`;
    expect(texts(text)).toEqual(text.split(' '));
  });
});

describe('tokenize: URLs with punctuation around them (test_urls.py)', () => {
  const URLS_FULL = [
    'http://www.nytimes.com/2016/04/20/us/politics/new-york-primary-preview.html?hp&action=click&pgtype=Homepage&clickSource=story-heading&module=a-lede-package-region&region=top-news&WT.nav=top-news&_r=0',
    'www.red-stars.com',
    'mailto:foo.bar@baz.com',
    'mailto:foo-bar@baz-co.com',
    'mailto:foo-bar@baz-co.com?subject=hi',
    'www.google.com?q=google',
    'http://foo.com/blah_(wikipedia)#cite-1',
  ];
  const PREFIXES = ['(', '"', '>'];
  const SUFFIXES = ['"', ':', '>'];
  for (const url of URLS_FULL) {
    it(url, () => {
      expect(texts(url)).toEqual([url]);
      for (const p of PREFIXES) {
        expect(texts(p + url)).toEqual([p, url]);
        for (const p2 of PREFIXES) expect(texts(p + p2 + url)).toEqual([p, p2, url]);
        for (const s of SUFFIXES) expect(texts(p + url + s)).toEqual([p, url, s]);
      }
      for (const s of SUFFIXES) {
        expect(texts(url + s)).toEqual([url, s]);
        // ":>" is an emoticon, so one token.
        for (const s2 of SUFFIXES)
          expect(texts(url + s + s2)).toEqual(s + s2 === ':>' ? [url, ':>'] : [url, s, s2]);
      }
    });
  }
});

/** mulberry32: a small seeded PRNG, so a failure can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = [
  ...'aAzZeEsSmMdDtTnNlLxXoOiI0123456789.,;:!?()[]{}<>\'"`-–—~_#*&%$£€+=/\\@|^°§…’‘“”«»²é中。😀🍕✪₹',
  ...".. ... 's n't km pm a.m. http:// www. .com :// US$ C++ °C ಠ".split(' '),
  ...":) :-( <3 don't can't gonna U.S. e.g. Mr. y'all well-known 10km $5".split(' '),
  ...[' ', ' ', ' ', '  ', '\n', '\t', '\u00a0', '\u3000', '\u200b', '\ufeff', '\x85'],
];

function randomText(next: () => number): string {
  let text = '';
  for (let n = 1 + Math.floor(next() * 16); n > 0; n--) text += PIECES[Math.floor(next() * PIECES.length)];
  return text;
}

/** Python's `str.isspace()` characters, which spaCy cuts at (JavaScript's `\s` differs: U+FEFF, U+0085). */
// eslint-disable-next-line no-control-regex -- Python counts U+001C to U+001F as whitespace
const PY_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u;
const PY_SPACES = new RegExp(PY_SPACE.source, 'gu');

describe('tokenize: properties on random text (seed 1)', () => {
  const next = random(1);
  const samples = Array.from({ length: 3000 }, () => randomText(next));

  it('gives the text back: tokens and their whitespace, joined, are the input', () => {
    for (const text of samples) {
      const tokens = tokenize(text);
      expect(tokens.map((t) => t.text + t.whitespace).join('')).toBe(text);
      for (const t of tokens) {
        expect(t.text).not.toBe('');
        expect(['', ' ']).toContain(t.whitespace);
        // A token is whitespace through and through, or has none in it.
        expect(t.text.replace(PY_SPACES, '') === '' || !PY_SPACE.test(t.text)).toBe(true);
      }
    }
  });

  // Not at a space: spaCy's special-case pass matches token sequences across spaces (see QUIRKS).
  it('tokenizes the text on either side of a line break independently', () => {
    const words = samples.map((text) => text.replace(PY_SPACES, '')).filter(Boolean);
    for (let i = 0; i + 1 < words.length; i += 2) {
      const [a, b] = [words[i]!, words[i + 1]!];
      expect(tokenize(`${a}\n${b}`)).toEqual([
        ...tokenize(a),
        { text: '\n', whitespace: '' },
        ...tokenize(b),
      ]);
    }
  });

  it('gives the same tokens the second time (from its cache)', () => {
    const text = samples.join(' ');
    expect(tokenize(text)).toEqual(tokenize(text));
  });
});

/**
 * Linear time, asserted as in linear-time.test.ts: 100 K characters cost at most about ten times
 * 10 K (bound 30 for garbage collection and a busy machine; quadratic code lands near 100).
 */
describe('tokenize: linear time', () => {
  const INPUTS: Record<string, (n: number) => string> = {
    "a run of '": (n) => "'".repeat(n),
    'a run of (': (n) => '('.repeat(n),
    'a run of dots': (n) => '.'.repeat(n),
    'a run of em dashes': (n) => '—'.repeat(n),
    'a run of letters': (n) => 'a'.repeat(n),
    'a run of spaces': (n) => `a${' '.repeat(n)}b`,
    'letters and colons': (n) => 'a:'.repeat(n / 2),
    'letters and at signs': (n) => 'a.b@'.repeat(n / 4),
    'initials without spaces': (n) => 'A.'.repeat(n / 2),
    emoticons: (n) => ':)'.repeat(n / 2),
  };

  /** Best of five, in milliseconds of this process's CPU time, never below 1 ms. */
  function time(run: () => unknown): number {
    let best = Infinity;
    for (let i = 0; i < 5; i++) {
      const started = process.cpuUsage();
      run();
      const used = process.cpuUsage(started);
      best = Math.min(best, (used.user + used.system) / 1000);
    }
    return Math.max(best, 1);
  }

  it.each(Object.entries(INPUTS))('grows linearly on %s (100 KB / 10 KB ≤ 30)', (_name, make) => {
    const small = make(10_000);
    const large = make(100_000);
    tokenize(small);
    expect(time(() => tokenize(large)) / time(() => tokenize(small))).toBeLessThanOrEqual(30);
  });
});
