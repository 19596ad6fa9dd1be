/**
 * The user's `--instructions` as far as the instructions' budget (8,000 tokens at most, about
 * 32,000 characters) could ever show them: each turn's input is kept in workflow history.
 */
const MAX_INSTRUCTION_CHARS_PER_TURN = 40_000;

/** What a turn's context carries of the user's instructions; `chars` says how long they were whole. */
export function instructionsForTurn(text: string): { text: string; chars: number } {
  // Never half of a surrogate pair: the conversation is stored as JSON.
  const clipped = text.slice(0, MAX_INSTRUCTION_CHARS_PER_TURN).replace(/[\ud800-\udbff]$/, '');
  return { text: clipped, chars: text.length };
}
