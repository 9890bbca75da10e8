/** Italian: espeak-ng's `it`. */
import { espeakLanguage } from './espeak-language.ts';

export const ITALIAN = espeakLanguage({
  code: 'i',
  name: 'Italian',
  tag: 'it',
  plsTags: ['it'],
  espeakVoice: 'it',
  // prettier-ignore
  numbers: {
    and: 'e', decimal: ',',
    currencies: {
      EUR: { unit: ['euro', 'euro'], cent: ['centesimo', 'centesimi'] },
      USD: { unit: ['dollaro', 'dollari'], cent: ['centesimo', 'centesimi'] },
      GBP: { unit: ['sterlina', 'sterline'], cent: ['penny', 'pence'] },
      JPY: { unit: ['yen', 'yen'], cent: ['sen', 'sen'] },
      BRL: { unit: ['real', 'reais'], cent: ['centavo', 'centavos'] },
      INR: { unit: ['rupia', 'rupie'], cent: ['paisa', 'paisa'] },
    },
  },
  signs: { plus: 'più', minus: 'meno' },
  corpus: 'it',
  warmUp: [
    'Il treno parte domani alle otto; vuoi che prenoti due posti vicino al finestrino?',
    'Grazie per aver aspettato, ho trovato tre voli che corrispondono alle tue date e al tuo budget.',
  ],
});
