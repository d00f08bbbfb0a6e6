/**
 * An accessibility audit of a page with axe-core. Its source is evaluated in the page through the
 * browser's debugging protocol, which the pages' Content-Security-Policy (script-src 'self') does
 * not govern: a <script> tag with the source inline would be blocked, and reported as an error.
 */
import { readFileSync } from 'node:fs';
import type { AxeResults, ImpactValue, Result } from 'axe-core';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** Impacts that fail the audit; moderate and minor ones are listed, not failed. */
export const FAILING_IMPACTS: readonly ImpactValue[] = ['serious', 'critical'];

export interface Audit {
  readonly name: string;
  readonly violations: readonly Result[];
  /** The serious and critical violations, in words (empty when there are none). */
  readonly failures: string;
}

/** Runs axe on the whole page as it is now (WCAG 2.0, 2.1 and 2.2 A and AA, and axe's best practices). */
export async function audit(page: Page, name: string): Promise<Audit> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(`${AXE_SOURCE}\n;void 0`);
  const results = (await page.evaluate(`axe.run(document, {
    runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
    resultTypes: ['violations'],
  })`)) as AxeResults;
  const failing = results.violations.filter((violation) => FAILING_IMPACTS.includes(violation.impact ?? 'minor'));
  return { name, violations: results.violations, failures: describe(failing) };
}

/** One line per violation and an indented line per element: rule, impact, selector and what to fix. */
export function describe(violations: readonly Result[]): string {
  return violations
    .map((violation) => {
      const nodes = violation.nodes.map((node) => `    ${node.target.join(' ')}: ${node.failureSummary?.replace(/\s*\n\s*/g, ' ') ?? ''}`);
      return [`${violation.id} (${violation.impact}): ${violation.help}`, ...nodes].join('\n');
    })
    .join('\n');
}
