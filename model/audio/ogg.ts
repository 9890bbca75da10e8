/**
 * Ogg page writer (RFC 3533): lacing, page sequence numbers, header flags and the Ogg CRC-32.
 * Packets go in whole per call; a call that needs more than 255 lacing values spreads its
 * packets over several pages with the continuation flag.
 */
import { concatBytes } from '../../protocol/bytes.ts';

/** Lacing values per page: the segment count is one byte. */
const MAX_SEGMENTS = 255;
const HEADER_BYTES = 27;
const FLAG_CONTINUED = 0x01;
const FLAG_BOS = 0x02;
const FLAG_EOS = 0x04;

/** Granule position of a page on which no packet ends. */
export const NO_GRANULE = -1n;

// Ogg's CRC: polynomial 0x04C11DB7, MSB first (no reflection), initial value 0, no final XOR.
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let bit = 0; bit < 8; bit++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** The Ogg CRC-32 of `bytes` (for a page: computed with its CRC field zeroed). */
export function oggCrc32(bytes: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < bytes.length; i++) crc = (crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ bytes[i]!) & 0xff]!;
  return crc >>> 0;
}

/** Options of one {@link OggWriter.page} call. */
export interface OggPageOptions {
  /**
   * Granule position of the last page written by the call, i.e. the position after its last
   * packet (for Ogg Opus: 48 kHz samples including the pre-skip).
   */
  readonly granulePosition: bigint;
  /** Marks the first page written as the beginning of the stream (first page of the stream only). */
  readonly bos?: boolean;
  /** Marks the last page written as the end of the stream. */
  readonly eos?: boolean;
  /**
   * The granule position after each packet (same length as `packets`). Only needed when the
   * packets need more than one page and a packet other than the last ends on an earlier page:
   * that page's granule position is the position of the last packet ending on it. The last page
   * always takes `granulePosition`.
   */
  readonly packetGranules?: readonly bigint[];
}

/**
 * Writes the pages of one logical Ogg bitstream. Each `page` call returns one or more whole
 * pages holding the given packets complete, so a caller that streams the returned bytes as they
 * come never leaves a packet half-sent.
 */
export class OggWriter {
  /** The bitstream serial number written in every page. */
  readonly serial: number;
  private sequence = 0;

  /** @param serial bitstream serial number, an unsigned 32-bit integer (random per stream, usually). */
  constructor(serial: number) {
    if (!Number.isInteger(serial) || serial < 0 || serial > 0xffffffff) {
      throw new RangeError(`Ogg serial must be an unsigned 32-bit integer, got ${serial}`);
    }
    this.serial = serial;
  }

  /** Number of pages written so far (the next page's sequence number). */
  get pageCount(): number {
    return this.sequence;
  }

  /**
   * Writes `packets` (each complete) into as few pages as the 255-lacing-value limit allows and
   * returns the pages' bytes. With no packets it writes one empty page (e.g. a bare EOS page).
   */
  page(packets: readonly Uint8Array[], options: OggPageOptions): Uint8Array {
    const { packetGranules } = options;
    if (packetGranules !== undefined && packetGranules.length !== packets.length) {
      throw new RangeError('packetGranules must have one entry per packet');
    }

    // Lacing: ⌊L/255⌋ values of 255 and one terminating value L mod 255 (0 when L is a
    // multiple of 255, so that the reader knows the packet ended). Each lacing value also records
    // where its bytes come from.
    const lacing: number[] = [];
    const source: number[] = []; // packet index of each lacing value
    const offset: number[] = []; // byte offset in that packet
    packets.forEach((packet, index) => {
      for (let at = 0; ; at += 255) {
        const value = Math.min(packet.length - at, 255);
        lacing.push(value);
        source.push(index);
        offset.push(at);
        if (value < 255) break;
      }
    });
    // Refuse before writing anything (the sequence number must not advance on a failed call).
    const lastPageStart = Math.floor((lacing.length - 1) / MAX_SEGMENTS) * MAX_SEGMENTS;
    if (packetGranules === undefined && lacing.slice(0, Math.max(0, lastPageStart)).some((v) => v < 255)) {
      throw new RangeError('packets span several pages: pass packetGranules for the earlier pages');
    }

    const pages: Uint8Array[] = [];
    let first = 0;
    do {
      const last = Math.min(lacing.length, first + MAX_SEGMENTS);
      let bodyBytes = 0;
      let lastEnded = -1; // last packet whose terminating lacing value is on this page
      for (let s = first; s < last; s++) {
        bodyBytes += lacing[s]!;
        if (lacing[s]! < 255) lastEnded = source[s]!;
      }
      const isFirst = first === 0;
      const isLast = last === lacing.length;

      let granule: bigint;
      if (isLast) granule = options.granulePosition;
      else if (lastEnded < 0) granule = NO_GRANULE;
      else granule = packetGranules![lastEnded]!; // checked above

      let flags = 0;
      // Continued: the page starts inside a packet (including at the bare 0 that ends a packet
      // of 255·n bytes whose data filled the previous page).
      if (first < lacing.length && offset[first]! > 0) flags |= FLAG_CONTINUED;
      if (isFirst && options.bos) flags |= FLAG_BOS;
      if (isLast && options.eos) flags |= FLAG_EOS;

      const count = last - first;
      const page = new Uint8Array(HEADER_BYTES + count + bodyBytes);
      const view = new DataView(page.buffer);
      page.set([0x4f, 0x67, 0x67, 0x53]); // "OggS"
      page[4] = 0; // stream structure version
      page[5] = flags;
      view.setBigInt64(6, granule, true);
      view.setUint32(14, this.serial, true);
      view.setUint32(18, this.sequence++, true);
      page[26] = count;
      let at = HEADER_BYTES;
      for (let s = first; s < last; s++) page[at++] = lacing[s]!;
      for (let s = first; s < last; s++) {
        page.set(packets[source[s]!]!.subarray(offset[s]!, offset[s]! + lacing[s]!), at);
        at += lacing[s]!;
      }
      view.setUint32(22, oggCrc32(page), true);
      pages.push(page);
      first = last;
    } while (first < lacing.length);

    return concatBytes(pages);
  }
}
