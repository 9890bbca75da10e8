/**
 * The English tokenizer's special cases (tokenizer exceptions), ported from explosion/spaCy v3.8:
 * `spacy/lang/tokenizer_exceptions.py` (base exceptions, emoticons) and
 * `spacy/lang/en/tokenizer_exceptions.py`, merged as `spacy/util.py`'s `update_exc` does. Each is a
 * string and the texts of the tokens it becomes; only the texts matter here (spaCy also sets norms).
 * Used by tokenizer.ts only.
 */

const EMOTICONS = String.raw`
:) :-) :)) :-)) :))) :-))) (: (-: =) (= :] :-] [: [-: [= =] :o) (o: :} :-} 8) 8-) (-8 ;) ;-) (; (-; :(
:-( :(( :-(( :((( :-((( ): )-: =( >:( :') :'-) :'( :'-( :/ :-/ =/ =| :| :-| ]= =[ :1 :P :-P :p :-p :O :-O
:o :-o :0 :-0 :() >:o :* :-* :3 :-3 =3 :> :-> :X :-X :x :-x :D :-D ;D ;-D =D xD XD xDD XDD 8D 8-D ^_^ ^__^
^___^ >.< >.> <.< ._. ;_; -_- -__- v.v V.V v_v V_V o_o o_O O_o O_O 0_o o_0 0_0 o.O O.o O.O o.o 0.0 o.0
0.o @_@ <3 <33 <333 </3 (^_^) (-_-) (._.) (>_<) (*_*) (¬_¬) ಠ_ಠ ಠ︵ಠ (ಠ_ಠ) ¯\(ツ)/¯ (╯°□°）╯︵┻━┻ ><(((*>
`;

function baseExceptions(): [string, string[]][] {
  const single = [
    ...[' ', '\t', '\\t', '\n', '\\n', '\u2014', '\u00A0', "'", '\\")', '<space>', "''", 'C++'],
    ...[...'abcdefghijklmnopqrstuvwxyzäöü'].map((c) => `${c}.`),
    ...EMOTICONS.split(/\s+/u).filter(Boolean),
  ];
  const entries = single.map((s): [string, string[]] => [s, [s]]);
  for (const u of 'cfkCFK') entries.push([`°${u}.`, ['°', u, '.']]);
  return entries;
}

function englishExceptions(): Map<string, string[]> {
  const exc = new Map<string, string[]>();
  /** `word` and `Word`, each followed by each tail: `add('we', ["'ll"], ['ll'])` adds we'll, well, We'll, Well. */
  const add = (word: string, ...tails: string[][]): void => {
    for (const orth of [word, word[0]!.toUpperCase() + word.slice(1)]) {
      for (const tail of tails) exc.set(orth + tail.join(''), [orth, ...tail]);
    }
  };
  const one = (orth: string): void => void exc.set(orth, [orth]);

  add('i', ["'m"], ['m'], ["'m", 'a'], ['m', 'a']);
  const willWould = [
    ["'ll"],
    ['ll'],
    ["'ll", "'ve"],
    ['ll', 've'],
    ["'d"],
    ['d'],
    ["'d", "'ve"],
    ['d', 've'],
  ];
  for (const pron of ['i', 'you', 'he', 'she', 'it', 'we', 'they']) add(pron, ...willWould);
  for (const pron of ['i', 'you', 'we', 'they']) add(pron, ["'ve"], ['ve']);
  for (const pron of ['you', 'we', 'they']) add(pron, ["'re"], ['re']);
  for (const pron of ['he', 'she', 'it']) add(pron, ["'s"], ['s']);

  // W-words, relative pronouns, prepositions: the singular ones take no 're/'ve, the plural ones no 's.
  for (const word of [
    'who',
    'what',
    'when',
    'where',
    'why',
    'how',
    'there',
    'that',
    'this',
    'these',
    'those',
  ]) {
    const singular = word === 'that' || word === 'this';
    const plural = word === 'these' || word === 'those';
    if (!plural) add(word, ["'s"], ['s']);
    add(word, ["'ll"], ['ll'], ["'ll", "'ve"], ['ll', 've']);
    if (!singular) add(word, ["'re"], ['re'], ["'ve"], ['ve']);
    add(word, ["'d"], ['d'], ["'d", "'ve"], ['d', 've']);
  }

  const modals = ['ca', 'could', 'do', 'does', 'did', 'had', 'may', 'might', 'must', 'need', 'ought', 'sha'];
  for (const verb of [...modals, 'should', 'wo', 'would'])
    add(verb, ["n't"], ['nt'], ["n't", "'ve"], ['nt', 've']);
  for (const verb of ['could', 'might', 'must', 'should', 'would']) add(verb, ["'ve"], ['ve']);
  for (const verb of ['ai', 'are', 'is', 'was', 'were', 'have', 'has', 'dare']) add(verb, ["n't"], ['nt']);

  // Dropped final g (nothin, nothin'), one token either way; and a dropped start ('em, 'nuff).
  for (const word of ['doin', 'goin', 'nothin', 'nuthin', 'ol', 'somethin']) {
    for (const orth of [word, word[0]!.toUpperCase() + word.slice(1)]) {
      one(orth);
      one(`${orth}'`);
    }
  }
  for (const word of ['em', 'll', 'nuff']) {
    one(word);
    one(`'${word}`);
  }

  for (let h = 1; h <= 12; h++) {
    for (const period of ['a.m.', 'am', 'p.m.', 'pm']) exc.set(`${h}${period}`, [`${h}`, period]);
  }

  const split: string[][] = [
    ["y'", 'all'],
    ['y', 'all'],
    ['how', "'d", "'y"],
    ['How', "'d", "'y"],
    ['not', "'ve"],
    ['not', 've'],
    ['Not', "'ve"],
    ['Not', 've'],
    ['can', 'not'],
    ['Can', 'not'],
    ['gon', 'na'],
    ['Gon', 'na'],
    ['got', 'ta'],
    ['Got', 'ta'],
    ['let', "'s"],
    ['Let', "'s"],
    ["c'm", 'on'],
    ["C'm", 'on'],
  ];
  for (const parts of split) exc.set(parts.join(''), parts);

  const whole = String.raw`
'S 's ‘S ‘s and/or w/o 're 'Cause 'cause 'cos 'Cos 'coz 'Coz 'cuz 'Cuz 'bout ma'am Ma'am o'clock O'clock
lovin' Lovin' lovin Lovin havin' Havin' havin Havin doin' Doin' doin Doin goin' Goin' goin Goin Mt. Ak.
Ala. Apr. Ariz. Ark. Aug. Calif. Colo. Conn. Dec. Del. Feb. Fla. Ga. Ia. Id. Ill. Ind. Jan. Jul. Jun.
Kan. Kans. Ky. La. Mar. Mass. Mich. Minn. Miss. N.C. N.D. N.H. N.J. N.M. N.Y. Neb. Nebr. Nev. Nov. Oct.
Okla. Ore. Pa. S.C. Sep. Sept. Tenn. Va. Wash. Wis.
'd a.m. Adm. Bros. co. Co. Corp. D.C. Dr. e.g. E.g. E.G. Gen. Gov. i.e. I.e. I.E. Inc. Jr. Ltd. Md.
Messrs. Mo. Mont. Mr. Mrs. Ms. p.m. Ph.D. Prof. Rep. Rev. Sen. St. vs. v.s.
`;
  for (const orth of whole.split(/\s+/u).filter(Boolean)) one(orth);

  // Contractions that read as ordinary words (I'll → Ill, she'll → shell, we're → were, …) are left out.
  const ambiguous = 'Ill ill Its its Hell hell Shell shell Shed shed were Were Well well Whore whore';
  for (const word of ambiguous.split(' ')) exc.delete(word);
  return exc;
}

/** All exceptions, each one with `'` also with `’` (spaCy's `update_exc`). */
function buildExceptions(): Map<string, readonly string[]> {
  const all = new Map<string, readonly string[]>(baseExceptions());
  for (const [key, parts] of englishExceptions()) all.set(key, parts);
  for (const [key, parts] of [...all]) {
    if (key.includes("'"))
      all.set(
        key.replaceAll("'", '’'),
        parts.map((p) => p.replaceAll("'", '’')),
      );
  }
  return all;
}

export const SPECIALS = buildExceptions();
/** Longer strings cannot be special cases, so hashing them for a lookup is skipped. */
const MAX_SPECIAL_LENGTH = Math.max(...[...SPECIALS.keys()].map((k) => k.length));

export function special(s: string): readonly string[] | undefined {
  return s.length <= MAX_SPECIAL_LENGTH ? SPECIALS.get(s) : undefined;
}
