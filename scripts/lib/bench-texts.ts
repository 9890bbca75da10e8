/** What the benchmarks send: the lengths of a voice agent's answers. */

/** Four sentences of a typical answer; the first has no clause mark late enough to be cut early. */
export const PARAGRAPH: readonly string[] = [
  'Thanks for waiting, I found three flights that match your dates and budget.',
  'The earliest leaves at seven fifteen in the morning and lands just after noon.',
  'A later option departs at two and costs about forty dollars less.',
  'Would you like me to hold a seat on either one while you decide?',
];

/**
 * A long opening sentence (278 characters, five commas): what the early release of the first
 * chunk is for. Its first clause ends at the first comma, well past FIRST_CHUNK_MIN_CHARS (24).
 */
export const LONG_FIRST_SENTENCE =
  'Before we finalize your booking for the conference next month, I checked the hotel near the venue, ' +
  'the one by the river, and found that the rooms with a view are sold out, but the standard rooms are ' +
  'still available at the same rate, which includes breakfast and a late checkout.';

/** Eight sentences sent as one request: long enough for every idle worker to have work ahead. */
export const EIGHT_SENTENCES: readonly string[] = [
  ...PARAGRAPH,
  'Your package should arrive on Tuesday afternoon.',
  'I have moved your reservation to Friday at eight in the evening.',
  'Is there anything else you would like to change today?',
  'Tomorrow looks sunny, with a high of seventy two degrees.',
];

/** One request each, in turn, for traffic in a closed loop. */
export const SENTENCES: readonly string[] = [
  ...PARAGRAPH,
  'Sure, I can help with that.',
  'Your package should arrive on Tuesday afternoon.',
  'Let me check that for you, it will only take a moment.',
  'I have moved your reservation to Friday at eight in the evening.',
  'Is there anything else you would like to change today?',
  'Tomorrow looks sunny, with a high of seventy two degrees.',
];
