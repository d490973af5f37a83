/** `toolstore/lib/dates`: date arithmetic and formatting, on date-fns. */
import type { LibraryExport, LibraryModule } from "../../core/libraries/types";
import { bundleLibrary } from "./bundle";

type D = "Date | number | string";
const d: D = "Date | number | string";

const EXPORTS: LibraryExport[] = [
  {
    name: "format",
    description: 'Formats a date with a date-fns pattern ("yyyy-MM-dd", "EEEE d MMMM yyyy").',
    signature: `format(date: ${d}, pattern: string): string`,
  },
  {
    name: "formatISO",
    description: "The date as ISO 8601 text.",
    signature: `formatISO(date: ${d}, options?: { representation?: "complete" | "date" | "time" }): string`,
  },
  {
    name: "formatDistance",
    description: 'How far apart two dates are, in words ("3 days").',
    signature: `formatDistance(date: ${d}, base: ${d}, options?: { addSuffix?: boolean }): string`,
  },
  {
    name: "parseISO",
    description: "Parses ISO 8601 text into a Date (Invalid Date when it is not).",
    signature: "parseISO(text: string): Date",
  },
  {
    name: "parse",
    description: "Parses text in a date-fns pattern, relative to a reference date.",
    signature: `parse(text: string, pattern: string, reference: ${d}): Date`,
  },
  {
    name: "isValid",
    description: "Whether a value is a valid date.",
    signature: "isValid(date: unknown): boolean",
  },
  {
    name: "addDays",
    description: "The date plus n days.",
    signature: `addDays(date: ${d}, n: number): Date`,
  },
  {
    name: "addHours",
    description: "The date plus n hours.",
    signature: `addHours(date: ${d}, n: number): Date`,
  },
  {
    name: "addMinutes",
    description: "The date plus n minutes.",
    signature: `addMinutes(date: ${d}, n: number): Date`,
  },
  {
    name: "addMonths",
    description: "The date plus n months (clamped to the month's last day).",
    signature: `addMonths(date: ${d}, n: number): Date`,
  },
  {
    name: "subDays",
    description: "The date minus n days.",
    signature: `subDays(date: ${d}, n: number): Date`,
  },
  {
    name: "differenceInCalendarDays",
    description: "Calendar days from right to left.",
    signature: `differenceInCalendarDays(left: ${d}, right: ${d}): number`,
  },
  {
    name: "differenceInMinutes",
    description: "Whole minutes from right to left.",
    signature: `differenceInMinutes(left: ${d}, right: ${d}): number`,
  },
  {
    name: "startOfDay",
    description: "The start of the date's day.",
    signature: `startOfDay(date: ${d}): Date`,
  },
  { name: "endOfDay", description: "The end of the date's day.", signature: `endOfDay(date: ${d}): Date` },
  {
    name: "startOfWeek",
    description: "The start of the date's week (Sunday unless weekStartsOn).",
    signature: `startOfWeek(date: ${d}, options?: { weekStartsOn?: 0 | 1 | 2 | 3 | 4 | 5 | 6 }): Date`,
  },
  {
    name: "isBefore",
    description: "Whether the first date is before the second.",
    signature: `isBefore(date: ${d}, other: ${d}): boolean`,
  },
  {
    name: "isAfter",
    description: "Whether the first date is after the second.",
    signature: `isAfter(date: ${d}, other: ${d}): boolean`,
  },
  {
    name: "eachDayOfInterval",
    description: "Every day from start to end, inclusive.",
    signature: `eachDayOfInterval(interval: { start: ${d}; end: ${d} }): Date[]`,
  },
];

export const datesLibrary: LibraryModule = {
  name: "dates",
  description:
    "Date arithmetic and formatting (date-fns), in the server's time zone. Pure functions; runs inside the action.",
  builtOn: "date-fns 4.4.0",
  exports: EXPORTS,
  source: () =>
    bundleLibrary("dates", `export { ${EXPORTS.map((e) => e.name).join(", ")} } from "date-fns";`),
};
