/**
 * The English tokenizer against spaCy's `spacy/tests/tokenizer/test_urls.py`: URLs kept whole, and
 * with punctuation around them split off (the expectations as in en-tokenizer.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { tokenize } from '../../../model/text/en/tokenizer.ts';

const texts = (text: string): string[] => tokenize(text).map((t) => t.text);

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

describe('tokenize: URL lists', () => {
  for (const [input, expected] of URLS) {
    it(JSON.stringify(input), () => expect(texts(input)).toEqual(expected));
  }
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
