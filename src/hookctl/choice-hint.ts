import { suggest } from '../util/index.js';

// commander's refusal of a value outside `.choices(…)`: "… argument 'jsn' is invalid. Allowed choices are table, wide, json."
const CHOICE_ERROR = /argument '([^']*)' is invalid\. Allowed choices are ([^\n]*?)\.?\n/;

/**
 * commander names the allowed choices but not the one meant: the closest is added, as every
 * closed list hookd and hookctl refuse does (`-o jsn` → "did you mean json?").
 */
export function withChoiceHint(message: string): string {
  const m = CHOICE_ERROR.exec(message);
  if (!m) return message;
  const near = suggest(m[1]!, m[2]!.split(/,\s*/));
  if (near === undefined || near === m[1]) return message;
  return message.replace(m[0], `${m[0].slice(0, -1)} Did you mean ${near}?\n`);
}
