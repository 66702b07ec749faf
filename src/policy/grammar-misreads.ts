/**
 * What tree-sitter-bash 0.25.1 reads differently from bash, found by the differential test
 * (docs/PERMISSIONS.md has the table): its syntax errors, and the misreadings it reports no error
 * for. Each function looks at one node and its source and says why the line is uncertain, or
 * undefined when the node is read as bash reads it.
 */
import type { Node } from 'web-tree-sitter';

/** Statements other than a simple command: an escaped blank before one is part of a command name. */
export const STATEMENTS = new Set([
  'test_command',
  'compound_statement',
  'subshell',
  'if_statement',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'function_definition',
  'negated_command',
  'declaration_command',
  'unset_command',
]);

/** Bash's reserved words that the grammar gives as tokens of compound commands. */
const RESERVED_WORDS = new Set([
  '[[',
  '[',
  'case',
  'in',
  'esac',
  'for',
  'select',
  'while',
  'until',
  'do',
  'done',
  'if',
  'then',
  'elif',
  'else',
  'fi',
  'function',
]);

/** Reserved words that close or continue a compound command. */
const CLOSING_WORDS = new Set(['esac', 'fi', 'done', 'then', 'do', 'else', 'elif', '}']);
const COMPOUND_NODES = new Set([
  'test_command',
  'case_statement',
  'case_item',
  'c_style_for_statement',
  'function_definition',
  'if_statement',
  'elif_clause',
  'else_clause',
  'do_group',
  'for_statement',
  'while_statement',
  'compound_statement',
]);

/**
 * A reserved word or `;;` where bash would not read one: the grammar ends a `case` at the word
 * `esac` of `echo esac`, and takes a `;;` outside a case, with no error. Bash reads a closing
 * word only in a command's place: after an unescaped `;`, `&`, `|`, `(`, `)` or a newline (or
 * `do` after a `for` header, `esac` after `in`).
 */
export function misreadToken(node: Node, source: string): string | undefined {
  if (node.type === ';;' || node.type === ';&' || node.type === ';;&') {
    return node.parent?.type === 'case_item' ? undefined : `\`${node.type}\` outside a case`;
  }
  // `}` closes `${ }` too: only the words of compound commands are checked.
  if (!COMPOUND_NODES.has(node.parent?.type ?? '')) return undefined;
  // A reserved word is a whole word: the grammar splits `ina` into `in` and `a`.
  if (RESERVED_WORDS.has(node.type) && /[^\s;&|()<>]/.test(source[node.endIndex] ?? ' '))
    return `the grammar split a reserved word \`${node.type}\` off the word it starts`;
  if (!CLOSING_WORDS.has(node.type)) return undefined;
  let before = node.startIndex - 1;
  while (before >= 0 && (source[before] === ' ' || source[before] === '\t')) before--;
  const c = source[before];
  const separated = c === undefined || (';&|()\n'.includes(c) && !isEscaped(source, before));
  const previous = source.slice(Math.max(0, before - 1), before + 1);
  const allowed =
    separated ||
    (node.type === 'do' && node.parent?.type === 'for_statement') ||
    (node.type === 'esac' && previous === 'in');
  return allowed
    ? undefined
    : `the grammar took \`${node.type}\` for a reserved word where bash reads a word`;
}

/**
 * Bash ends a here-document at the first line that is its delimiter alone; the grammar also ends
 * it at `EOF; more` (a line bash reads as more of the body), or past a nested one's end.
 */
export function heredocEndMisreads(node: Node, source: string): string[] {
  const reasons: string[] = [];
  const lineStart = source.lastIndexOf('\n', node.startIndex - 1) + 1;
  const lineEnd = source.indexOf('\n', node.startIndex);
  const line = source.slice(lineStart, lineEnd === -1 ? source.length : lineEnd);
  const stripTabs = node.parent?.children.some((child) => child?.type === '<<-') ?? false;
  const bare = (text: string) => (stripTabs ? text.replace(/^\t+/, '') : text);
  if (bare(line) !== node.text)
    reasons.push(`a here-document whose closing line \`${line}\` is not its delimiter alone`);
  // Bash ends it at the first such line; the grammar may read a nested one's end as part of it.
  const body = node.parent?.children.find((child) => child?.type === 'heredoc_body');
  const earlier = source
    .slice(body?.startIndex ?? lineStart, lineStart)
    .split('\n')
    .slice(0, -1);
  if (earlier.some((text) => bare(text) === node.text))
    reasons.push(`a here-document that bash ends at an earlier line \`${node.text}\``);
  return reasons;
}

/**
 * The blank of a `\ ` right before a word, which the grammar drops as if it were a blank (empty
 * when there is none): bash keeps it as the word's first character (`\ rm` runs a command named
 * ` rm`).
 */
export function escapedBlankBefore(node: Node, source: string): string {
  const blank = source[node.startIndex - 1];
  if ((blank !== ' ' && blank !== '\t') || !isEscaped(source, node.startIndex - 1)) return '';
  // Dropped only when no token of the tree holds it (`a\ b` may come as `a\ ` and `b`).
  const holder = node.tree.rootNode.descendantForIndex(node.startIndex - 2);
  return holder === null || holder.childCount > 0 ? blank : '';
}

/** Whether the character at `index` follows an odd run of backslashes, so bash reads it literally. */
function isEscaped(source: string, index: number): boolean {
  let backslashes = 0;
  while (source[index - 1 - backslashes] === '\\') backslashes++;
  return backslashes % 2 === 1;
}

/** Why the grammar could not read `root`: one reason per outermost error. */
export function syntaxErrors(root: Node, source: string): string[] {
  const reasons: string[] = [];
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (node.isMissing) {
      reasons.push(missingReason(node));
    } else if (node.type === 'ERROR') {
      reasons.push(errorReason(node, source));
    } else if (node.hasError) {
      for (let i = node.childCount - 1; i >= 0; i--) {
        const child = node.child(i);
        if (child) stack.push(child);
      }
    }
  }
  return reasons;
}

function missingReason(node: Node): string {
  const what = node.type;
  if (what === '"') return 'an unterminated double quote';
  if (what === '`') return 'an unterminated backquote';
  if (what === ')' || what === '}') {
    const opened = node.parent?.type.replaceAll('_', ' ') ?? 'a group';
    return `a ${opened} without its closing \`${what}\``;
  }
  return `a missing \`${what}\``;
}

function errorReason(node: Node, source: string): string {
  const first = node.firstChild;
  const heredoc = node.children.find((child) => child?.type === 'heredoc_start');
  if (heredoc) {
    const delimiter = heredoc.text.replace(/["'\\]/g, '');
    const after = source.slice(heredoc.endIndex);
    if (!after.includes('\n')) return 'a here-document without its body';
    const lines = after.split('\n').slice(1);
    if (!lines.some((line) => line.replace(/^\t+/, '') === delimiter))
      return `a here-document without its closing line \`${delimiter}\``;
    return 'a here-document the grammar cannot read';
  }
  const text = node.text;
  if (text.startsWith("'") || (first?.type === 'ERROR' && first.text.startsWith("'")))
    return 'an unterminated single quote';
  if (text.startsWith('"')) return 'an unterminated double quote';
  if (text.startsWith(')')) return 'an unmatched `)`';
  const shown = text.replace(/\s+/g, ' ').trim();
  return `bash syntax the grammar cannot read: \`${shown.length > 40 ? `${shown.slice(0, 39)}…` : shown}\``;
}
