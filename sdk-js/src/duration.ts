// Durations for advanceTime and message TTLs: milliseconds or ISO 8601
// (`PT30S`, `P1DT2H`, `P2W`, `P1Y2M`). Years and months are calendar
// amounts, so they are resolved against a start instant.

import { BadRequestError } from './errors.js';

const pattern =
  /^P(?:(\d+(?:[.,]\d+)?)Y)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/;

/** Duration is a parsed ISO 8601 duration. */
export interface Duration {
  years: number;
  months: number;
  /** Everything below a month, in milliseconds (weeks, days, hours, minutes, seconds). */
  ms: number;
}

/** parseDuration parses an ISO 8601 duration; it throws BadRequestError on anything else. */
export function parseDuration(text: string): Duration {
  const m = pattern.exec(text.trim().toUpperCase());
  if (!m || text.trim().toUpperCase() === 'P' || text.trim().toUpperCase().endsWith('T')) {
    throw new BadRequestError({ code: 'BAD_REQUEST', message: `duration ${JSON.stringify(text)}: not an ISO 8601 duration such as PT30S or P1DT2H` });
  }
  const n = (i: number) => (m[i] ? Number(m[i]!.replace(',', '.')) : 0);
  const ms = n(3) * 604_800_000 + n(4) * 86_400_000 + n(5) * 3_600_000 + n(6) * 60_000 + n(7) * 1000;
  return { years: n(1), months: n(2), ms };
}

/**
 * durationTarget returns the instant `d` after `from`, or null if `d` has
 * no calendar part and is better passed as milliseconds.
 */
export function addDuration(from: Date, d: Duration): Date {
  const t = new Date(from.getTime());
  if (d.years || d.months) {
    if (!Number.isInteger(d.years) || !Number.isInteger(d.months)) {
      throw new BadRequestError({ code: 'BAD_REQUEST', message: 'duration: fractional years or months are not supported' });
    }
    t.setUTCMonth(t.getUTCMonth() + d.years * 12 + d.months);
  }
  return new Date(t.getTime() + d.ms);
}

/** toMs turns milliseconds or a duration without calendar part into milliseconds. */
export function toMs(value: number | string, what: string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) {
      throw new BadRequestError({ code: 'BAD_REQUEST', message: `${what}: ${value} is not a non-negative number of milliseconds` });
    }
    return value;
  }
  const d = parseDuration(value);
  if (d.years || d.months) {
    throw new BadRequestError({ code: 'BAD_REQUEST', message: `${what}: ${value}: years and months have no fixed length here; use days` });
  }
  return d.ms;
}
