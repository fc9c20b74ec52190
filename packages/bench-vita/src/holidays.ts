/*
 * python-holidays' China calendar (0.105) with English names, as `get_date_holiday_info` answers
 * under an English locale. Statutory holidays, the "(observed)" days that move a holiday off a
 * weekend to the next working day, and the days off swapped with weekend working days. The lunar
 * dates and the swapped days are tabled for 2023–2026, the years VitaBench's tasks are set in.
 */

type Md = readonly [month: number, day: number];

interface Year {
  readonly springFestival: Md;
  readonly qingming: Md;
  readonly dragonBoat: Md;
  readonly midAutumn: Md;
  /** Days off in exchange for a weekend working day: [day off, working day]. */
  readonly swapped: readonly (readonly [Md, Md])[];
}

const YEARS: Readonly<Record<number, Year>> = {
  2023: {
    springFestival: [1, 22],
    qingming: [4, 5],
    dragonBoat: [6, 22],
    midAutumn: [9, 29],
    swapped: [
      [
        [1, 26],
        [1, 28],
      ],
      [
        [1, 27],
        [1, 29],
      ],
      [
        [5, 2],
        [4, 23],
      ],
      [
        [5, 3],
        [5, 6],
      ],
      [
        [6, 23],
        [6, 25],
      ],
      [
        [10, 5],
        [10, 7],
      ],
      [
        [10, 6],
        [10, 8],
      ],
    ],
  },
  2024: {
    springFestival: [2, 10],
    qingming: [4, 4],
    dragonBoat: [6, 10],
    midAutumn: [9, 17],
    swapped: [
      [
        [2, 15],
        [2, 4],
      ],
      [
        [2, 16],
        [2, 18],
      ],
      [
        [4, 5],
        [4, 7],
      ],
      [
        [5, 2],
        [4, 28],
      ],
      [
        [5, 3],
        [5, 11],
      ],
      [
        [9, 16],
        [9, 14],
      ],
      [
        [10, 4],
        [9, 29],
      ],
      [
        [10, 7],
        [10, 12],
      ],
    ],
  },
  2025: {
    springFestival: [1, 29],
    qingming: [4, 4],
    dragonBoat: [5, 31],
    midAutumn: [10, 6],
    swapped: [
      [
        [2, 3],
        [1, 26],
      ],
      [
        [2, 4],
        [2, 8],
      ],
      [
        [5, 5],
        [4, 27],
      ],
      [
        [10, 7],
        [9, 28],
      ],
      [
        [10, 8],
        [10, 11],
      ],
    ],
  },
  2026: {
    springFestival: [2, 17],
    qingming: [4, 5],
    dragonBoat: [6, 19],
    midAutumn: [9, 25],
    swapped: [
      [
        [1, 2],
        [1, 4],
      ],
      [
        [2, 20],
        [2, 14],
      ],
      [
        [2, 23],
        [2, 28],
      ],
      [
        [5, 5],
        [5, 9],
      ],
      [
        [10, 6],
        [9, 20],
      ],
      [
        [10, 7],
        [10, 10],
      ],
    ],
  },
};

const DAY = 86_400_000;
const key = (time: number): string => new Date(time).toISOString().slice(0, 10);
const at = (year: number, [month, day]: Md, offset = 0): number => Date.UTC(year, month - 1, day) + offset * DAY;
const pad = (n: number): string => String(n).padStart(2, "0");

/** Every holiday of `year`: date (yyyy-mm-dd) → name. */
function holidaysOf(year: number): Map<string, string> {
  const table = YEARS[year];
  const days = new Map<string, string>();
  const statutory: [number, string][] = [];
  const add = (time: number, name: string, observe = true): void => {
    days.set(key(time), name);
    if (observe) statutory.push([time, name]);
  };
  add(at(year, [1, 1]), "New Year's Day");
  if (table !== undefined) {
    const spring = "Chinese New Year (Spring Festival)";
    if (year >= 2025) add(at(year, table.springFestival, -1), "Chinese New Year's Eve");
    for (let d = 0; d < 3; d++) add(at(year, table.springFestival, d), spring);
    add(at(year, table.qingming), "Tomb-Sweeping Day");
  }
  add(at(year, [5, 1]), "Labor Day");
  if (year >= 2025) add(at(year, [5, 2]), "Labor Day");
  if (table !== undefined) {
    add(at(year, table.dragonBoat), "Dragon Boat Festival");
    add(at(year, table.midAutumn), "Mid-Autumn Festival");
  }
  for (let d = 1; d <= 3; d++) add(at(year, [10, d]), "National Day");
  for (const [off, work] of table?.swapped ?? []) {
    days.set(key(at(year, off)), `Day off (substituted from ${pad(work[0])}/${pad(work[1])}/${year})`);
  }
  // A statutory holiday on a weekend is observed on the next working day that is not a holiday.
  for (const [time, name] of statutory.sort((a, b) => a[0] - b[0])) {
    const weekday = new Date(time).getUTCDay();
    if (weekday !== 0 && weekday !== 6) continue;
    let next = time + DAY;
    while ([0, 6].includes(new Date(next).getUTCDay()) || days.has(key(next))) next += DAY;
    days.set(key(next), `${name} (observed)`);
  }
  return days;
}

const CACHE = new Map<number, Map<string, string>>();

/** The English name of the China holiday on a date, or undefined on a normal day. */
export function chinaHoliday(year: number, month: number, day: number): string | undefined {
  let days = CACHE.get(year);
  if (days === undefined) CACHE.set(year, (days = holidaysOf(year)));
  return days.get(`${String(year).padStart(4, "0")}-${pad(month)}-${pad(day)}`);
}

/**
 * `get_holiday_date`'s fixed English table (upstream's own, in its order, which breaks score
 * ties): year (a string; the number 2025 is "not found") → holiday name → date.
 */
export const HOLIDAY_DATES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  "2025": [
    ["New Year's Day", "2025-01-01"],
    ["Start of Autumn", "2025-08-07"],
    ["Women's Day", "2025-03-08"],
    ["Laba Festival", "2025-01-07"],
    ["Dragon Head Festival", "2025-03-01"],
    ["Party Founding Day", "2025-07-01"],
    ["Qingming Festival", "2025-04-04"],
    ["Double Ninth Festival", "2025-10-29"],
    ["Dragon Boat Festival", "2025-05-31"],
    ["Mother's Day", "2025-05-11"],
    ["Lantern Festival", "2025-02-15"],
    ["Labor Day", "2025-05-01"],
    ["Qixi Festival", "2025-08-29"],
    ["Winter Solstice", "2025-12-21"],
    ["Christmas Day", "2025-12-25"],
    ["National Day", "2025-10-01"],
    ["Mid-Autumn Festival", "2025-10-06"],
  ],
  "2024": [
    ["Double Ninth Festival", "2024-10-11"],
    ["Qixi Festival", "2024-08-10"],
    ["Valentine's Day", "2024-02-14"],
    ["Qingming Festival", "2024-04-04"],
    ["Dragon Boat Festival", "2024-06-10"],
    ["Lantern Festival", "2024-02-24"],
    ["Mid-Autumn Festival", "2024-09-17"],
  ],
  "2023": [
    ["National Day", "2023-10-01"],
    ["Dragon Boat Festival", "2023-06-22"],
    ["Mid-Autumn Festival", "2023-09-29"],
    ["Qingming Festival", "2023-04-05"],
    ["Double Ninth Festival", "2023-10-23"],
    ["Father's Day", "2023-06-18"],
  ],
};
