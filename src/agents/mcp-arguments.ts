import { parseModelJson, type ModelJsonOptions } from '../shared/model-json';

/**
 * An MCP tool call's arguments: a JSON object, whatever else the server's schema asks (the server
 * checks that and answers). `repaired`: the JSON accepted, when the model's text needed repair.
 */
export function parseMcpArguments(
  rawArguments: string,
  options: ModelJsonOptions,
): { ok: true; repaired?: string } | { ok: false; error: string } {
  if (rawArguments.trim() === '') return { ok: true, repaired: '{}' };
  const json = parseModelJson(rawArguments, options);
  if (!json.ok) return { ok: false, error: `arguments are ${json.error}` };
  const value = json.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'arguments must be a JSON object' };
  }
  return 'repaired' in json && json.repaired ? { ok: true, repaired: json.repaired } : { ok: true };
}
