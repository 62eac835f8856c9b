/**
 * The times of LoCoMo's turns, as the recall protocol gives them (../shared/datasets/README.md): each turn its
 * sitting's date read as UTC ("1:56 pm on 8 May, 2023" → 2023-05-08T13:56Z), the turns of a sitting one minute apart
 * in order. An app that loads a real conversation gives each message its own time; time-aware recall reads it.
 */

import { MONTHS } from "../src/search/dates.js";

/** A sitting's date as the data writes it, in epoch milliseconds (UTC), or null when it does not read. */
export function sittingTime(date: string | undefined): number | null {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(date ?? "");
  if (!m) return null;
  const hour = (Number(m[1]) % 12) + (m[3]!.toLowerCase() === "pm" ? 12 : 0);
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  return month < 0 ? null : Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2]));
}

/** Each turn's time in order (undefined where its sitting has no date that reads). */
export function turnTimes(turns: readonly { session?: string; date?: string }[]): (Date | undefined)[] {
  let sitting: string | undefined;
  let start: number | null = null;
  let i = 0;
  return turns.map((turn) => {
    if (turn.session !== sitting) {
      sitting = turn.session;
      start = sittingTime(turn.date);
      i = 0;
    }
    return start === null ? undefined : new Date(start + 60_000 * i++);
  });
}
