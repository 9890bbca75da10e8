/** Spanish: espeak-ng's `es`. */
import { espeakLanguage } from './espeak-language.ts';

export const SPANISH = espeakLanguage({
  code: 'e',
  name: 'Spanish',
  tag: 'es',
  plsTags: ['es'],
  espeakVoice: 'es',
  // prettier-ignore
  numbers: {
    and: 'con', decimal: ',',
    currencies: {
      EUR: { unit: ['euro', 'euros'], cent: ['céntimo', 'céntimos'] },
      USD: { unit: ['dólar', 'dólares'], cent: ['centavo', 'centavos'] },
      GBP: { unit: ['libra', 'libras'], cent: ['penique', 'peniques'] },
      JPY: { unit: ['yen', 'yenes'], cent: ['sen', 'sen'] },
      BRL: { unit: ['real', 'reales'], cent: ['centavo', 'centavos'] },
      INR: { unit: ['rupia', 'rupias'], cent: ['paisa', 'paisas'] },
    },
  },
  signs: { plus: 'más', minus: 'menos' },
  corpus: 'es',
  warmUp: [
    'El tren sale mañana a las ocho; ¿quieres que reserve dos asientos junto a la ventana?',
    'Gracias por esperar, encontré tres vuelos que coinciden con tus fechas y tu presupuesto.',
  ],
});
