/**
 * The YAML subset a docker-compose file uses: block mappings and sequences, plain and quoted
 * scalars, flow sequences of scalars, comments. Scalars stay strings. Anything else (anchors,
 * block scalars, flow mappings, tabs) throws, so a compose file that outgrows the subset fails
 * its test loudly instead of being misread.
 */
export type YamlValue = string | null | YamlValue[] | { [key: string]: YamlValue };

interface Line {
  no: number;
  indent: number;
  text: string;
}

export function parseYaml(source: string): YamlValue {
  const lines: Line[] = [];
  source.split('\n').forEach((raw, i) => {
    if (/^\s*\t/.test(raw)) throw new Error(`line ${i + 1}: tabs are not supported`);
    const text = stripComment(raw).trimEnd();
    if (!text.trim() || text.trim() === '---') return;
    lines.push({ no: i + 1, indent: text.length - text.trimStart().length, text: text.trimStart() });
  });
  if (!lines.length) return null;
  const [value, next] = parseBlock(lines, 0, lines[0].indent);
  if (next < lines.length) throw new Error(`line ${lines[next].no}: unexpected indentation`);
  return value;
}

function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) {
      return line.slice(0, i);
    }
  }
  return line;
}

const isSeqItem = (l: Line): boolean => l.text === '-' || l.text.startsWith('- ');

function parseBlock(lines: Line[], start: number, indent: number): [YamlValue, number] {
  return isSeqItem(lines[start]) ? parseSequence(lines, start, indent) : parseMapping(lines, start, indent);
}

function parseSequence(lines: Line[], start: number, indent: number): [YamlValue[], number] {
  const items: YamlValue[] = [];
  let i = start;
  while (i < lines.length && lines[i].indent === indent && isSeqItem(lines[i])) {
    const rest = lines[i].text.slice(1).trimStart();
    if (!rest) {
      const [value, next] = childBlock(lines, i, indent);
      items.push(value);
      i = next;
    } else if (splitKey(rest)) {
      // "- key: value" starts a mapping whose keys sit two columns in.
      const inner = indent + (lines[i].text.length - rest.length);
      const copy = [...lines];
      copy[i] = { ...lines[i], indent: inner, text: rest };
      const [value, next] = parseMapping(copy, i, inner);
      items.push(value);
      i = next;
    } else {
      items.push(parseScalar(rest, lines[i].no));
      i++;
    }
  }
  return [items, i];
}

function parseMapping(lines: Line[], start: number, indent: number): [Record<string, YamlValue>, number] {
  const map: Record<string, YamlValue> = {};
  let i = start;
  while (i < lines.length && lines[i].indent === indent && !isSeqItem(lines[i])) {
    const split = splitKey(lines[i].text);
    if (!split) throw new Error(`line ${lines[i].no}: expected "key: value", got "${lines[i].text}"`);
    const [key, rest] = split;
    if (key in map) throw new Error(`line ${lines[i].no}: duplicate key "${key}"`);
    if (rest) {
      map[key] = parseScalar(rest, lines[i].no);
      i++;
    } else {
      [map[key], i] = childBlock(lines, i, indent);
    }
  }
  if (i < lines.length && lines[i].indent > indent)
    throw new Error(`line ${lines[i].no}: unexpected indentation`);
  return [map, i];
}

/** The block under line `at`: deeper lines, or a sequence at the same indent under a mapping key. */
function childBlock(lines: Line[], at: number, indent: number): [YamlValue, number] {
  const next = lines[at + 1];
  if (next && next.indent > indent) return parseBlock(lines, at + 1, next.indent);
  if (next && next.indent === indent && isSeqItem(next) && !isSeqItem(lines[at])) {
    return parseSequence(lines, at + 1, indent);
  }
  return [null, at + 1];
}

/** "key: rest" with the key unquoted; null when the text is not a mapping entry. */
function splitKey(text: string): [string, string] | null {
  let key: string;
  let after: string;
  const quoted = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*')\s*:(?:\s+|$)/.exec(text);
  if (quoted) {
    key = parseScalar(quoted[1], 0) as string;
    after = text.slice(quoted[0].length);
  } else {
    const m = /^([^\s"'#[\]{},][^#]*?)\s*:(?:\s+|$)/.exec(text);
    if (!m) return null;
    key = m[1];
    after = text.slice(m[0].length);
  }
  return [key, after.trim()];
}

function parseScalar(text: string, lineNo: number): YamlValue {
  const t = text.trim();
  if (/^[&*!|>{]/.test(t)) throw new Error(`line ${lineNo}: "${t}" is outside the supported YAML subset`);
  if (t.startsWith('[')) {
    if (!t.endsWith(']')) throw new Error(`line ${lineNo}: flow sequences must fit on one line`);
    return splitFlow(t.slice(1, -1), lineNo).map((item) => parseScalar(item, lineNo));
  }
  if (t.startsWith('"')) {
    if (!/^"(?:[^"\\]|\\.)*"$/.test(t)) throw new Error(`line ${lineNo}: bad double-quoted string ${t}`);
    return JSON.parse(t) as string;
  }
  if (t.startsWith("'")) {
    if (!/^'(?:[^']|'')*'$/.test(t)) throw new Error(`line ${lineNo}: bad single-quoted string ${t}`);
    return t.slice(1, -1).replace(/''/g, "'");
  }
  return t === '~' || t === 'null' ? null : t;
}

function splitFlow(inner: string, lineNo: number): string[] {
  const items: string[] = [];
  let quote: string | null = null;
  let current = '';
  for (const c of inner) {
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '[' || c === '{') {
      throw new Error(`line ${lineNo}: nested flow collections are not supported`);
    } else if (c === ',') {
      items.push(current.trim());
      current = '';
      continue;
    }
    current += c;
  }
  if (current.trim()) items.push(current.trim());
  return items;
}
