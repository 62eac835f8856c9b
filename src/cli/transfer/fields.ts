import { CliError } from "../errors.js";

/** Reads fields of one record, failing with the line number and the field's path. */
export class Fields {
  constructor(
    private readonly record: Record<string, unknown>,
    private readonly line: number,
    private readonly path = "",
  ) {}

  fail(problem: string): never {
    throw new CliError(`line ${this.line}: ${problem}`, "INVALID_FILE");
  }

  private bad(name: string, expected: string): never {
    return this.fail(`"${this.path}${name}" must be ${expected}`);
  }

  string(name: string, nonEmpty = false): string {
    const value = this.record[name];
    if (typeof value !== "string" || (nonEmpty && value.length === 0)) {
      this.bad(name, nonEmpty ? "a non-empty string" : "a string");
    }
    return value;
  }

  nullableString(name: string): string | null {
    return this.record[name] === null ? null : this.string(name);
  }

  boolean(name: string): boolean {
    const value = this.record[name];
    if (typeof value !== "boolean") this.bad(name, "true or false");
    return value;
  }

  /** Whether the record has the field at all (a field added by a later version). */
  has(name: string): boolean {
    return Object.hasOwn(this.record, name);
  }

  // Canonical `toISOString()` form only: every backend stores and returns it unchanged, so re-exports match.
  time(name: string): string {
    const value = this.string(name);
    const date = new Date(value);
    if (Number.isNaN(date.getTime()) || date.toISOString() !== value) {
      this.bad(name, "an ISO-8601 UTC timestamp like 2025-01-31T12:00:00.000Z");
    }
    return value;
  }

  count(name: string): number {
    const value = this.record[name];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      this.bad(name, "a whole number >= 0");
    }
    return value;
  }

  /** A whole number, negative too (a pending write's index). */
  integer(name: string): number {
    const value = this.record[name];
    if (typeof value !== "number" || !Number.isSafeInteger(value)) this.bad(name, "a whole number");
    return value;
  }

  amount(name: string): number {
    const value = this.record[name];
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) this.bad(name, "a number >= 0");
    return value;
  }

  object(name: string): Record<string, unknown> {
    const value = this.record[name];
    if (value === null || typeof value !== "object" || Array.isArray(value)) this.bad(name, "an object");
    return value as Record<string, unknown>;
  }

  /** The fields of a nested object. */
  nested(name: string): Fields {
    return new Fields(this.object(name), this.line, `${this.path}${name}.`);
  }
}
