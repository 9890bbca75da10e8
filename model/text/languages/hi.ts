/** Hindi: espeak-ng's `hi`. */
import { espeakLanguage } from './espeak-language.ts';

export const HINDI = espeakLanguage({
  code: 'h',
  name: 'Hindi',
  tag: 'hi',
  plsTags: ['hi'],
  espeakVoice: 'hi',
  // prettier-ignore
  numbers: {
    and: 'और', decimal: '.', indian: true,
    currencies: {
      EUR: { unit: ['यूरो', 'यूरो'], cent: ['सेंट', 'सेंट'] },
      USD: { unit: ['डॉलर', 'डॉलर'], cent: ['सेंट', 'सेंट'] },
      GBP: { unit: ['पाउंड', 'पाउंड'], cent: ['पेंस', 'पेंस'] },
      JPY: { unit: ['येन', 'येन'], cent: ['सेन', 'सेन'] },
      BRL: { unit: ['रियाल', 'रियाल'], cent: ['सेंटावो', 'सेंटावो'] },
      INR: { unit: ['रुपया', 'रुपये'], cent: ['पैसा', 'पैसे'] },
    },
  },
  signs: { plus: 'प्लस', minus: 'माइनस' },
  sayAsUnsupported: ['ordinal', 'date', 'time', 'unit'],
  corpus: 'hi',
  warmUp: [
    'ट्रेन कल सुबह आठ बजे निकलेगी, क्या मैं खिड़की के पास दो सीटें आरक्षित कर दूँ?',
    'इंतज़ार के लिए धन्यवाद, मुझे आपकी तारीखों और बजट से मेल खाती तीन उड़ानें मिलीं।',
  ],
});
