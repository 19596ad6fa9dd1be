/**
 * A small, strict XML reader: elements, attributes, text, CDATA, comments and
 * the predefined and numeric entities. That is all pytest's JUnit report uses,
 * and it keeps the project free of an XML dependency. Malformed input throws.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (whole, ref: string) => {
    if (ref.startsWith('#x')) return safeCodePoint(parseInt(ref.slice(2), 16), whole);
    if (ref.startsWith('#')) return safeCodePoint(parseInt(ref.slice(1), 10), whole);
    const named = NAMED_ENTITIES[ref];
    if (named === undefined) throw new Error(`unknown XML entity ${whole}`);
    return named;
  });
}

function safeCodePoint(code: number, whole: string): string {
  if (!Number.isFinite(code) || code < 0 || code > 0x10ffff)
    throw new Error(`bad XML character reference ${whole}`);
  return String.fromCodePoint(code);
}

// Sticky (`y`) so each match is anchored at `lastIndex` without slicing a possibly huge document.
const NAME = /[A-Za-z_:][\w.:-]*/y;
const ATTR = /\s+([A-Za-z_:][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;
const TAG_END = /\s*(\/?)>/y;

function matchAt(re: RegExp, source: string, pos: number): RegExpExecArray | null {
  re.lastIndex = pos;
  return re.exec(source);
}

export function parseXml(source: string): XmlElement {
  let pos = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;

  const appendText = (text: string): void => {
    const top = stack[stack.length - 1];
    if (top) top.text += text;
    else if (text.trim() !== '') throw new Error('XML text outside the root element');
  };

  while (pos < source.length) {
    const lt = source.indexOf('<', pos);
    if (lt === -1) {
      appendText(decodeEntities(source.slice(pos)));
      break;
    }
    if (lt > pos) appendText(decodeEntities(source.slice(pos, lt)));
    pos = lt;
    if (source.startsWith('<?', pos)) {
      pos = skipPast(source, pos, '?>');
    } else if (source.startsWith('<!--', pos)) {
      pos = skipPast(source, pos, '-->');
    } else if (source.startsWith('<![CDATA[', pos)) {
      const end = source.indexOf(']]>', pos);
      if (end === -1) throw new Error('unterminated CDATA section');
      appendText(source.slice(pos + 9, end));
      pos = end + 3;
    } else if (source.startsWith('<!', pos)) {
      pos = skipPast(source, pos, '>');
    } else if (source.startsWith('</', pos)) {
      const end = source.indexOf('>', pos);
      if (end === -1) throw new Error('unterminated closing tag');
      const name = source.slice(pos + 2, end).trim();
      const top = stack.pop();
      if (!top || top.name !== name) throw new Error(`mismatched closing tag </${name}>`);
      pos = end + 1;
    } else {
      const nameMatch = matchAt(NAME, source, pos + 1);
      if (!nameMatch) throw new Error(`bad tag at offset ${pos}`);
      const element: XmlElement = { name: nameMatch[0], attrs: {}, children: [], text: '' };
      pos += 1 + nameMatch[0].length;
      for (;;) {
        const attr = matchAt(ATTR, source, pos);
        if (attr) {
          element.attrs[attr[1]] = decodeEntities(attr[2] ?? attr[3] ?? '');
          pos += attr[0].length;
          continue;
        }
        const close = matchAt(TAG_END, source, pos);
        if (!close) throw new Error(`bad attribute syntax in <${element.name}>`);
        pos += close[0].length;
        const parent = stack[stack.length - 1];
        if (parent) parent.children.push(element);
        else if (root) throw new Error('more than one XML root element');
        else root = element;
        if (close[1] !== '/') stack.push(element);
        break;
      }
    }
  }
  if (stack.length > 0) throw new Error(`unclosed element <${stack[stack.length - 1].name}>`);
  if (!root) throw new Error('empty XML document');
  return root;
}

function skipPast(source: string, pos: number, terminator: string): number {
  const end = source.indexOf(terminator, pos);
  if (end === -1) throw new Error(`unterminated ${terminator} construct`);
  return end + terminator.length;
}
