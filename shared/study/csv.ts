/**
 * One CSV field, for every CSV the project writes (the bonus sheets, the study report's tables).
 * Text may come from strangers (a lab participant types its id): a spreadsheet would run a field
 * that starts with `=`, `+`, `-` or `@` as a formula, and a tab or carriage return can hide such a
 * start, so text starting with any of them gets a single quote in front, as OWASP advises
 * ("CSV Injection"), and is quoted when it holds a comma, a quote or a line break (P-131).
 *
 * A number is the writer's own, never text: it is written as a number, a negative one with its
 * minus sign, so a sheet's amounts and a report's differences stay numbers.
 */

/** The characters a spreadsheet may read as the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A field: text neutralised and quoted as needed; a finite number in decimal (with `decimals`
 * digits after the point when given); null or undefined empty.
 */
export function csvField(value: string | number | null | undefined, decimals?: number): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`a CSV field cannot hold ${value}`);
    return decimals === undefined ? String(value) : value.toFixed(decimals);
  }
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A line of fields, ended by a line break. */
export function csvLine(fields: readonly string[]): string {
  return `${fields.join(',')}\n`;
}
