/**
 * A word of a command as the walk of the grammar's tree builds it (split-commands.ts): the pieces
 * of text bash gives a word, read as bash reads them.
 */
import type { Node } from 'web-tree-sitter';
import { escapedBlankBefore } from './grammar-misreads.js';
import { ASSIGNMENT_NAME, decodeAnsiC, emptyWord, type Word } from './shell-words.js';

/**
 * A command's words from the grammar's nodes. Nodes with no blank between them are one word: the
 * grammar sometimes gives `-rf` and `` `rm x` `` of `-rf`rm x`` as two arguments.
 */
export class Words {
  readonly list: Word[] = [];
  private end = -1;

  /** `start`: where the word begins in the source, when that is before its node. */
  add(node: Node, word: Word, start = node.startIndex): void {
    const last = this.list.at(-1);
    if (last !== undefined && start === this.end) {
      last.text += word.text;
      last.literal &&= word.literal;
      last.quoted ||= word.quoted;
      last.pattern ||= word.pattern;
    } else {
      this.list.push({ ...word });
    }
    this.end = node.endIndex;
  }

  /** Something not a word came between (a redirection): the next word starts afresh. */
  gap(): void {
    this.end = -1;
  }
}

export const BRACE_EXPANSION = /^\{[^\s{}]*(,|\.\.)[^\s{}]*\}/;

/** An unquoted word as bash reads it: backslashes removed, globs and assignments noted. */
export function unquotedWord(raw: string): Word {
  const word = emptyWord();
  let plainSoFar = true;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c === '\\') {
      const next = raw[i + 1];
      if (next === '\n') {
        i++;
      } else if (next === undefined) {
        word.text += '\\';
      } else {
        word.text += next;
        word.quoted = true;
        plainSoFar = false;
        i++;
      }
      continue;
    }
    if (c === '=' && plainSoFar && !word.assignment && ASSIGNMENT_NAME.test(word.text))
      word.assignment = true;
    if ((c === '*' || c === '?' || c === '[') && !word.assignment) word.pattern = true;
    if (c === '{' && BRACE_EXPANSION.test(raw.slice(i))) word.pattern = true;
    word.text += c;
  }
  return word;
}

/** The text of a double-quoted stretch as bash reads it: `\\` escapes only `$`, `` ` ``, `"`, `\\` and a newline. */
export function unescapeDoubleQuoted(raw: string): string {
  return raw.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

/** The bodies of the backquoted substitutions in `text` (as in a here-document), unescaped as bash does. */
export function backquoted(text: string, unterminated: () => void): string[] {
  const bodies: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
    } else if (text[i] === '`') {
      let body = '';
      let j = i + 1;
      for (; j < text.length && text[j] !== '`'; j++) {
        const next = text[j + 1];
        if (text[j] === '\\' && next !== undefined && '$`\\'.includes(next)) {
          body += next;
          j++;
        } else {
          body += text[j];
        }
      }
      if (j >= text.length) unterminated();
      bodies.push(body);
      i = j;
    }
  }
  return bodies;
}

/** Where a node sits: how deep in substitutions, and whether bash expands single quotes there. */
export interface Context {
  depth: number;
  treeDepth: number;
  /** Inside `$(( ))`, `(( ))` or a `"${ }"`: `'$(id)'` there runs id. */
  singleQuotesExpand: boolean;
  /** Inside `[[ ]]`, where `<(x)` is a process substitution the grammar reads as `<` and `(x)`. */
  conditional?: boolean;
}

/** Inside `$( )`, `<( )` or a subshell: one level deeper, with quoting that starts afresh. */
export function nested(at: Context): Context {
  return { ...at, depth: at.depth + 1, singleQuotesExpand: false, conditional: false };
}

export function arithmetic(at: Context): Context {
  return { ...at, singleQuotesExpand: true };
}

/**
 * Reads the words of a command from the grammar's nodes; the statement walk (split-commands.ts)
 * extends it, and walks the substitutions a word holds (`node`).
 */
export abstract class WordReader {
  constructor(
    /** What the tree was parsed from: its nodes' indices point into it. */
    protected readonly source: string,
  ) {}

  /** Finds the commands under `node` (a substitution in a word, an expansion's default). */
  abstract node(node: Node, at: Context): void;
  protected abstract unsure(reason: string): void;

  /** Adds a whole word of a command, with the `\ ` the grammar dropped before it put back. */
  protected addArgument(words: Words, node: Node, at: Context): void {
    const word = this.word(node, at);
    const blank = escapedBlankBefore(node, this.source);
    if (!blank) words.add(node, word);
    // The escaped blank joins it to a word right before it too (`{\ -rf` is one word).
    else words.add(node, { ...word, text: blank + word.text, quoted: true }, node.startIndex - 2);
  }

  /** A word's text with quotes removed, walking the substitutions it holds. */
  protected word(node: Node, at: Context): Word {
    switch (node.type) {
      case 'command_name':
        return node.firstChild ? this.word(node.firstChild, at) : emptyWord();
      case 'word':
        // An unescaped blank in a word: the grammar joined words bash keeps apart (`sudo { {`).
        if (/(?:^|[^\\])[ \t\n]/.test(node.text))
          this.unsure(`the grammar read \`${node.text}\` as one word`);
        return unquotedWord(node.text);
      case 'number':
        return unquotedWord(node.text);
      case 'test_operator':
      case 'string_content':
        return { ...emptyWord(), text: node.text };
      case 'raw_string':
        this.node(node, at);
        return { ...emptyWord(), text: node.text.slice(1, -1), quoted: true };
      case 'ansi_c_string': {
        const decoded = decodeAnsiC(node.text, 2);
        if (decoded === undefined) this.unsure("an unterminated $'...' quote");
        return { ...emptyWord(), text: decoded?.text ?? '', quoted: true };
      }
      case 'string':
        return this.doubleQuoted(node, at);
      case 'translated_string':
        return node.firstChild ? this.word(node.firstChild, at) : emptyWord();
      case 'concatenation':
        return this.concatenation(node, at);
      case 'brace_expression':
      case 'extglob_pattern':
        return { ...emptyWord(), text: node.text, pattern: true };
      default:
        // A token or a name (`]`, `==`, `B` of `export B`).
        if (node.childCount === 0) return { ...emptyWord(), text: node.text };
        // An expansion or a substitution: what it gives is known only when it runs. The grammar
        // takes `${x:-\`}` though its backquote never closes.
        if (node.type === 'expansion' && (node.text.replace(/\\./g, '').match(/`/g) ?? []).length % 2 === 1)
          this.unsure('an unterminated backquote');
        this.node(node, at);
        return { ...emptyWord(), text: node.text, literal: false };
    }
  }

  /**
   * A double-quoted word: the text between its expansions is read from the source, since the
   * grammar leaves a newline out of its `string_content`.
   */
  protected doubleQuoted(node: Node, at: Context): Word {
    const word: Word = { ...emptyWord(), quoted: true };
    const inside = { ...at, singleQuotesExpand: true };
    const last = node.lastChild;
    const closed = node.childCount > 1 && last?.type === '"' && !last.isMissing;
    let from = node.startIndex + 1;
    for (const part of node.namedChildren) {
      if (!part || part.type === 'string_content') continue;
      word.text += unescapeDoubleQuoted(this.source.slice(from, part.startIndex));
      word.literal = false;
      word.text += part.text;
      this.node(part, part.type === 'expansion' ? inside : at);
      from = part.endIndex;
    }
    word.text += unescapeDoubleQuoted(this.source.slice(from, closed ? node.endIndex - 1 : node.endIndex));
    return word;
  }

  protected concatenation(node: Node, at: Context): Word {
    const word = emptyWord();
    const parts = node.children.filter((part): part is Node => part !== null);
    parts.forEach((part, i) => {
      const piece = this.word(part, at);
      if (i === 0) word.assignment = piece.assignment;
      word.text += piece.text;
      word.literal &&= piece.literal;
      word.quoted ||= piece.quoted;
      word.pattern ||= piece.pattern && !word.assignment;
      // `{a,"b c"}`: a brace expansion spans the parts of a word.
      if (part.type === 'word' && part.text.includes('{')) {
        const rest = parts
          .slice(i)
          .map((p) => p.text)
          .join('');
        if (BRACE_EXPANSION.test(rest.slice(part.text.indexOf('{')))) word.pattern = true;
      }
    });
    return word;
  }
}
