import type { ReviewRisk } from '../repo';
import { shownName } from '../shared/shown-lines';

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
          ? `${shownName(risk.path)} -> ${shownName(risk.target ?? '')}`
          : shownName(risk.path);
      const needs = withNeeds && risk.needs ? ` [aca apply needs --${risk.needs}]` : '';
      return `  ${name} (${risk.kind}, ${risk.change}): ${risk.note}${needs}`;
    }),
  ];
}
