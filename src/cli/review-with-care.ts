import type { ReviewRisk } from '../repo/review-risks';
import { printableName } from '../shared/terminal-text';

/**
 * The "Review with care" heading and one line per risk (see review-risks.ts); nothing when there
 * are none. `withNeeds`: say which `aca apply` option a risk needs (not after it was applied).
 */
export function reviewWithCareLines(risks: readonly ReviewRisk[], withNeeds = true): string[] {
  if (risks.length === 0) return [];
  return [
    'Review with care:',
    ...risks.map((risk) => {
      const name =
        risk.kind === 'link'
          ? `${printableName(risk.path)} -> ${printableName(risk.target ?? '')}`
          : printableName(risk.path);
      const needs = withNeeds && risk.needs ? ` [aca apply needs --${risk.needs}]` : '';
      return `  ${name} (${risk.kind}, ${risk.change}): ${risk.note}${needs}`;
    }),
  ];
}
