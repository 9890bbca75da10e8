/** French: espeak-ng's `fr` (the voice of fr-fr, which Kokoro's pipeline asks for). */
import { espeakLanguage } from './espeak-language.ts';

export const FRENCH = espeakLanguage({
  code: 'f',
  name: 'French',
  tag: 'fr-FR',
  plsTags: ['fr'],
  espeakVoice: 'fr',
  // prettier-ignore
  numbers: {
    and: 'et', decimal: ',',
    currencies: {
      EUR: { unit: ['euro', 'euros'], cent: ['centime', 'centimes'] },
      USD: { unit: ['dollar', 'dollars'], cent: ['cent', 'cents'] },
      GBP: { unit: ['livre', 'livres'], cent: ['penny', 'pence'] },
      JPY: { unit: ['yen', 'yens'], cent: ['sen', 'sen'] },
      BRL: { unit: ['réal', 'réais'], cent: ['centavo', 'centavos'] },
      INR: { unit: ['roupie', 'roupies'], cent: ['paisa', 'paisas'] },
    },
  },
  signs: { plus: 'plus', minus: 'moins' },
  // espeak-ng reads French ordinals written 1er, 2ème.
  ordinal: (n) => (n === '1' ? '1er' : `${n}ème`),
  corpus: 'fr',
  warmUp: [
    'Le train part demain à huit heures ; voulez-vous que je réserve deux places près de la fenêtre ?',
    "Merci d'avoir patienté, j'ai trouvé trois vols qui correspondent à vos dates et à votre budget.",
  ],
});
