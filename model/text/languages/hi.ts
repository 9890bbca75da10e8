/** Hindi: espeak-ng's `hi`. */
import { espeakLanguage } from './espeak-language.ts';

export const HINDI = espeakLanguage({
  code: 'h',
  name: 'Hindi',
  tag: 'hi',
  plsTags: ['hi'],
  espeakVoice: 'hi',
  warmUp: [
    'ट्रेन कल सुबह आठ बजे निकलेगी, क्या मैं खिड़की के पास दो सीटें आरक्षित कर दूँ?',
    'इंतज़ार के लिए धन्यवाद, मुझे आपकी तारीखों और बजट से मेल खाती तीन उड़ानें मिलीं।',
  ],
});
