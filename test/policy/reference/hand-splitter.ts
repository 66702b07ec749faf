/**
 * The command splitter as it was before it stood on tree-sitter-bash: a hand-written reader of
 * bash, kept only as the reference of the differential test (split-commands.differential.test.ts)
 * and never shipped. Its wrapper rules are the shipped ones (src/policy/command-wrappers.ts), so the
 * test compares the two ways of reading the grammar and nothing else. It is one file because it is
 * one recursive-descent parser.
 *
 * Finds every simple command a bash command line can run: across `;`, `&&`, `||`, `|`, `&` and
 * newlines; inside subshells, groups, `if`/`while`/`for`/`case` bodies, command and process
 * substitutions (`$( )`, backquotes, `<( )`), expansions and unquoted here-documents; through
 * wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `time`, `coproc`, ...) and into the strings
 * that `bash -c`, `eval`, `su -c`, `env -S`, `watch`, `find -exec`, `trap` and `mapfile -C` run.
 * Pure: it never runs anything.
 *
 * Where bash could run something this cannot see (a command name computed at run time, an
 * unbalanced quote or parenthesis, an unterminated here-document, a command too deeply nested, a
 * shell or `source` reading its commands from standard input, an alias or `hash -p`),
 * it says why in `uncertain` rather than guess; callers treat that as needing approval or denial.
 */
import { analyzeCommand } from '../../../src/policy/command-layers.js';
import {
  ASSIGNMENT_NAME,
  decodeAnsiC,
  emptyWord,
  PASS_THROUGH_KEYWORDS,
  type Word,
} from '../../../src/policy/shell-words.js';
import type { CommandUnit, SplitCommands } from '../../../src/policy/split-commands.js';

/** Nesting (substitutions, subshells, `bash -c` strings) deeper than this is not followed. */
const MAX_DEPTH = 32;

/** Parse steps per character of input before the command counts as too complex to check. */
const STEPS_PER_CHAR = 40;

export function handSplitCommands(source: string): SplitCommands {
  const out: Output = {
    commands: [],
    uncertain: [],
    steps: 0,
    budget: 10_000 + STEPS_PER_CHAR * source.length,
  };
  try {
    new Parser(source, out, 0).parseSource();
  } catch (err) {
    if (!(err instanceof TooComplex)) throw err;
    out.uncertain.push(err.message);
  }
  return { commands: out.commands, uncertain: [...new Set(out.uncertain)] };
}

interface Output {
  commands: CommandUnit[];
  uncertain: string[];
  steps: number;
  budget: number;
}

/** Stops the parse: the rest of the command is not checked. */
class TooComplex extends Error {}

interface Heredoc {
  delimiter: string;
  stripTabs: boolean;
  /** Unquoted delimiter: the body's `$( )`, backquotes and `${ }` run. */
  expands: boolean;
}

type Until = 'end' | 'paren' | 'case';

const METACHARACTERS = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const REDIRECTION = /^(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|<|>>|>&|>\||>|&>>|&>)/;

class Parser {
  private pos = 0;
  private depth: number;
  private pendingHeredocs: Heredoc[] = [];

  constructor(
    private readonly src: string,
    private readonly out: Output,
    depth: number,
  ) {
    this.depth = depth;
  }

  /** Parses the whole source as a command list. */
  parseSource(): void {
    this.parseList('end');
    if (this.pendingHeredocs.length > 0) this.unsure('a here-document without its body');
  }

  // Lists and commands

  private parseList(until: Until): void {
    for (;;) {
      this.tick();
      this.skipBlanks();
      if (this.eof()) return;
      const c = this.peek();
      const next = this.peek(1);
      if (c === '\n') {
        this.newline();
      } else if (c === ')') {
        if (until === 'paren') return;
        this.unsure('an unmatched `)`');
        this.pos++;
      } else if (c === ';') {
        if (next === ';' || next === '&') {
          const length = this.src.startsWith(';;&', this.pos) ? 3 : 2;
          this.pos += length;
          if (until === 'case') return;
          this.unsure('`;;` outside a case');
        } else {
          this.pos++;
        }
      } else if (c === '&' && next !== '>') {
        this.pos += next === '&' ? 2 : 1;
      } else if (c === '|') {
        this.pos += next === '|' || next === '&' ? 2 : 1;
      } else if (until === 'case' && this.atReservedWord('esac')) {
        return;
      } else {
        this.parseCommand();
      }
    }
  }

  /** One simple command (or the keyword that opens a compound one) up to the next operator. */
  private parseCommand(): void {
    const words: Word[] = [];
    for (;;) {
      this.tick();
      this.skipBlanks();
      if (this.eof()) break;
      const c = this.peek();
      const next = this.peek(1);
      if (c === '\n' || c === ';' || c === '|' || c === ')' || (c === '&' && next !== '>')) break;
      if (this.redirection()) continue;
      if (c === '(' && words.length === 0) {
        if (next === '(' && this.arithmetic(2)) continue;
        this.pos++;
        this.nested(() => this.parseList('paren'));
        this.closeParen('a subshell');
        continue;
      }
      if (c === '(') {
        const definition = /^\(\s*\)/.exec(this.src.slice(this.pos, this.pos + 64));
        if (words.length === 1 && definition) {
          // `name() body`: what follows is the body, parsed as commands.
          this.pos += definition[0].length;
          words.length = 0;
          continue;
        }
        this.unsure('an unexpected `(`');
        this.pos++;
        continue;
      }
      const word = this.readArgument();
      if (words.length === 0 && word.literal && !word.quoted) {
        if (PASS_THROUGH_KEYWORDS.has(word.text)) continue;
        if (word.text === 'case') {
          this.caseClause();
          return;
        }
        if (word.text === 'for' || word.text === 'select') {
          this.forHeader();
          return;
        }
        if (word.text === '[[') {
          this.conditional();
          return;
        }
        if (word.text === 'function') {
          this.skipBlanks();
          this.readWord();
          const parens = /^\s*\(\s*\)/.exec(this.src.slice(this.pos, this.pos + 64));
          if (parens) this.pos += parens[0].length;
          return;
        }
      }
      words.push(word);
    }
    this.analyze(words);
  }

  /** `case WORD in (PATTERN | PATTERN) LIST ;; ... esac` */
  private caseClause(): void {
    this.skipBlanks();
    this.readArgument();
    this.skipBlanksAndNewlines();
    if (!this.atReservedWord('in')) {
      this.unsure('a malformed case');
      return;
    }
    this.pos += 2;
    for (;;) {
      this.tick();
      this.skipBlanksAndNewlines();
      if (this.eof()) {
        this.unsure('a case without esac');
        return;
      }
      if (this.atReservedWord('esac')) {
        this.pos += 4;
        return;
      }
      if (this.peek() === '(') this.pos++;
      for (;;) {
        this.tick();
        this.skipBlanks();
        const c = this.peek();
        if (c === ')') {
          this.pos++;
          break;
        }
        if (c === '|') {
          this.pos++;
          continue;
        }
        if (c === undefined || METACHARACTERS.has(c)) {
          this.unsure('a malformed case pattern');
          return;
        }
        this.readWord();
      }
      this.parseList('case');
    }
  }

  /** `for NAME in WORDS; do` or `for ((...)); do`: the header runs nothing but its substitutions. */
  private forHeader(): void {
    this.skipBlanks();
    if (this.src.startsWith('((', this.pos) && this.arithmetic(2)) return;
    for (;;) {
      this.tick();
      this.skipBlanks();
      const c = this.peek();
      if (c === undefined || c === '\n' || c === ';' || c === '&' || c === '|') return;
      if (METACHARACTERS.has(c)) {
        this.unsure('a malformed for');
        return;
      }
      const word = this.readWord();
      // `for x do ...` without a separator: the body starts here.
      if (word.text === 'do' && word.literal && !word.quoted) return;
    }
  }

  /** `[[ ... ]]`: its operators are no command separators; only its substitutions run. */
  private conditional(): void {
    for (;;) {
      this.tick();
      this.skipBlanks();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('a `[[` without `]]`');
        return;
      }
      if (METACHARACTERS.has(c) && c !== '<' && c !== '>') {
        this.pos++;
        continue;
      }
      if ((c === '<' || c === '>') && this.peek(1) !== '(') {
        this.pos++;
        continue;
      }
      const word = this.readArgument();
      if (word.text === ']]' && !word.quoted) return;
    }
  }

  /**
   * `((...))` or `$((...))` from the first `(` (`skip` = 2 or 3 characters to its content). True
   * when it closes with `))` as arithmetic; otherwise nothing is recorded and the caller reads it
   * as a subshell or a command substitution, as bash does.
   */
  private arithmetic(skip: number): boolean {
    const start = this.pos;
    const commands = this.out.commands.length;
    const uncertain = this.out.uncertain.length;
    const heredocs = this.pendingHeredocs.length;
    this.pos += skip;
    let depth = 0;
    const word = emptyWord();
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) break;
      if (c === '(') {
        depth++;
        this.pos++;
      } else if (c === ')') {
        if (depth === 0) {
          if (this.peek(1) === ')') {
            this.pos += 2;
            return true;
          }
          break;
        }
        depth--;
        this.pos++;
      } else if (c === '$') {
        this.dollar(word, true);
      } else if (c === '`') {
        this.backquote(word);
      } else if (c === '"') {
        this.doubleQuoted(word);
      } else {
        // A single quote included: arithmetic reads as if double-quoted, so `(( '$(id)' ))` runs id.
        this.pos++;
      }
    }
    this.pos = start;
    this.out.commands.length = commands;
    this.out.uncertain.length = uncertain;
    this.pendingHeredocs.length = heredocs;
    return false;
  }

  // Redirections and here-documents

  /** Reads a redirection and its target at the cursor, if one is there. */
  private redirection(): boolean {
    const match = REDIRECTION.exec(this.src.slice(this.pos, this.pos + 80));
    if (!match) return false;
    const operator = match[1] as string;
    const after = this.src[this.pos + match[0].length];
    // `<(` and `>(` are process substitutions, not redirections.
    if ((operator === '<' || operator === '>') && after === '(' && match[0] === operator) return false;
    this.pos += match[0].length;
    this.skipBlanks();
    if (operator === '<<' || operator === '<<-') {
      const delimiter = this.readWord();
      if (delimiter.text === '' || !delimiter.literal) {
        this.unsure('a here-document with an unusual delimiter');
      }
      this.pendingHeredocs.push({
        delimiter: delimiter.text,
        stripTabs: operator === '<<-',
        expands: !delimiter.quoted,
      });
      return true;
    }
    const c = this.peek();
    if (c === undefined || (METACHARACTERS.has(c) && !((c === '<' || c === '>') && this.peek(1) === '('))) {
      this.unsure(`a redirection \`${operator}\` without a target`);
      return true;
    }
    this.readArgument();
    return true;
  }

  /** Consumes a newline, then the bodies of the here-documents that wait for it. */
  private newline(): void {
    this.pos++;
    const heredocs = this.pendingHeredocs;
    this.pendingHeredocs = [];
    for (const heredoc of heredocs) {
      let body = '';
      let closed = false;
      while (!this.eof()) {
        this.tick();
        const end = this.src.indexOf('\n', this.pos);
        const lineEnd = end === -1 ? this.src.length : end;
        const line = this.src.slice(this.pos, lineEnd);
        this.pos = end === -1 ? this.src.length : end + 1;
        if ((heredoc.stripTabs ? line.replace(/^\t+/, '') : line) === heredoc.delimiter) {
          closed = true;
          break;
        }
        body += `${line}\n`;
      }
      if (!closed) this.unsure(`a here-document without its closing line \`${heredoc.delimiter}\``);
      if (heredoc.expands) this.sub(body, (parser) => parser.expansionsOnly());
    }
  }

  /** The body of an unquoted here-document: only its expansions run. */
  private expansionsOnly(): void {
    const word = emptyWord();
    while (!this.eof()) {
      this.tick();
      const c = this.peek();
      if (c === '\\') this.pos += 2;
      else if (c === '$') this.dollar(word, true);
      else if (c === '`') this.backquote(word);
      else this.pos++;
    }
  }

  // Words

  /** A word, or a process substitution standing as one. */
  private readArgument(): Word {
    const c = this.peek();
    if ((c === '<' || c === '>') && this.peek(1) === '(') {
      const start = this.pos;
      this.pos += 2;
      this.nested(() => this.parseList('paren'));
      this.closeParen('a process substitution');
      return { ...emptyWord(), text: this.src.slice(start, this.pos), literal: false };
    }
    const start = this.pos;
    const word = this.readWord();
    if (this.pos === start) {
      // Nothing readable here (a stray operator): step over it so the parse moves on.
      this.unsure(`an unexpected \`${c}\``);
      this.pos++;
    }
    return word;
  }

  private readWord(): Word {
    const word = emptyWord();
    let plainSoFar = true;
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) break;
      if (METACHARACTERS.has(c)) {
        if (c === '(' && word.assignment && this.src[this.pos - 1] === '=') {
          this.arrayValue(word);
          continue;
        }
        break;
      }
      switch (c) {
        case '\\': {
          const next = this.peek(1);
          if (next === '\n') {
            this.pos += 2;
          } else if (next === undefined) {
            word.text += '\\';
            this.pos++;
          } else {
            word.text += next;
            word.quoted = true;
            plainSoFar = false;
            this.pos += 2;
          }
          break;
        }
        case "'":
          plainSoFar = false;
          this.singleQuoted(word);
          break;
        case '"':
          plainSoFar = false;
          this.doubleQuoted(word);
          break;
        case '$':
          plainSoFar = false;
          this.dollar(word, false);
          break;
        case '`':
          plainSoFar = false;
          this.backquote(word);
          break;
        case '=':
          if (plainSoFar && !word.assignment && ASSIGNMENT_NAME.test(word.text)) word.assignment = true;
          word.text += c;
          this.pos++;
          break;
        case '*':
        case '?':
        case '[':
          if (!word.assignment) word.pattern = true;
          word.text += c;
          this.pos++;
          break;
        case '{':
          if (/^\{[^\s{}]*(,|\.\.)[^\s{}]*\}/.test(this.src.slice(this.pos, this.pos + 256)))
            word.pattern = true;
          word.text += c;
          this.pos++;
          break;
        default:
          word.text += c;
          this.pos++;
      }
    }
    return word;
  }

  private singleQuoted(word: Word): void {
    word.quoted = true;
    const end = this.src.indexOf("'", this.pos + 1);
    if (end === -1) {
      this.unsure('an unterminated single quote');
      word.text += this.src.slice(this.pos + 1);
      this.pos = this.src.length;
      return;
    }
    word.text += this.src.slice(this.pos + 1, end);
    this.pos = end + 1;
  }

  private doubleQuoted(word: Word): void {
    word.quoted = true;
    this.pos++;
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('an unterminated double quote');
        return;
      }
      if (c === '"') {
        this.pos++;
        return;
      }
      if (c === '\\') {
        const next = this.peek(1);
        if (next === '\n') {
          this.pos += 2;
        } else if (next !== undefined && '$`"\\'.includes(next)) {
          word.text += next;
          this.pos += 2;
        } else {
          word.text += c;
          this.pos++;
        }
      } else if (c === '$') {
        this.dollar(word, true);
      } else if (c === '`') {
        this.backquote(word);
      } else {
        word.text += c;
        this.pos++;
      }
    }
  }

  /** `$...` at the cursor: a substitution, an expansion, ANSI-C or locale quoting, or a plain `$`. */
  private dollar(word: Word, inDoubleQuotes: boolean): void {
    const start = this.pos;
    const next = this.peek(1);
    if (next === "'" && !inDoubleQuotes) {
      word.quoted = true;
      const decoded = decodeAnsiC(this.src, this.pos + 2);
      if (decoded === undefined) {
        this.unsure("an unterminated $'...' quote");
        this.pos = this.src.length;
        return;
      }
      word.text += decoded.text;
      this.pos = decoded.end;
      return;
    }
    if (next === '"' && !inDoubleQuotes) {
      this.pos++;
      this.doubleQuoted(word);
      return;
    }
    word.literal = false;
    if (next === '(') {
      if (!(this.peek(2) === '(' && this.arithmetic(3))) {
        this.pos += 2;
        this.nested(() => this.parseList('paren'));
        this.closeParen('a command substitution');
      }
    } else if (next === '{') {
      this.pos += 2;
      this.braces(word, inDoubleQuotes);
    } else if (next === '[') {
      this.pos += 2;
      this.oldArithmetic();
    } else if (next !== undefined && /[A-Za-z_]/.test(next)) {
      this.pos++;
      while (/[A-Za-z0-9_]/.test(this.peek() ?? '')) this.pos++;
    } else if (next !== undefined && /[0-9@*#?$!-]/.test(next)) {
      this.pos += 2;
    } else {
      word.literal = true;
      word.text += '$';
      this.pos++;
      return;
    }
    word.text += this.src.slice(start, this.pos);
  }

  /**
   * The rest of a `${...}` expansion, with the substitutions it holds. Inside double quotes a
   * single quote is a plain character there (`"${x:-'$(id)'}"` runs id).
   */
  private braces(word: Word, inDoubleQuotes: boolean): void {
    let depth = 0;
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('an unterminated ${');
        return;
      }
      if (c === '}') {
        this.pos++;
        if (depth === 0) return;
        depth--;
      } else if (c === '{') {
        depth++;
        this.pos++;
      } else if (c === '\\') {
        this.pos += 2;
      } else if (c === "'" && !inDoubleQuotes) {
        this.singleQuoted(emptyWord());
      } else if (c === '"') {
        this.doubleQuoted(emptyWord());
      } else if (c === '$') {
        this.dollar(emptyWord(), false);
      } else if (c === '`') {
        this.backquote(word);
      } else {
        this.pos++;
      }
    }
  }

  /** The rest of `$[...]` (old arithmetic): its substitutions run. */
  private oldArithmetic(): void {
    let depth = 0;
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('an unterminated $[');
        return;
      }
      if (c === ']') {
        this.pos++;
        if (depth === 0) return;
        depth--;
      } else if (c === '[') {
        depth++;
        this.pos++;
      } else if (c === '$') {
        this.dollar(emptyWord(), true);
      } else if (c === '`') {
        this.backquote(emptyWord());
      } else if (c === '"') {
        this.doubleQuoted(emptyWord());
      } else {
        this.pos++;
      }
    }
  }

  /** A backquoted substitution: its content, unescaped as bash does, is parsed on its own. */
  private backquote(word: Word): void {
    word.literal = false;
    const start = this.pos;
    this.pos++;
    let inner = '';
    for (;;) {
      this.tick();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('an unterminated backquote');
        break;
      }
      if (c === '`') {
        this.pos++;
        break;
      }
      const next = this.peek(1);
      if (c === '\\' && next !== undefined && '$`\\'.includes(next)) {
        inner += next;
        this.pos += 2;
      } else {
        inner += c;
        this.pos++;
      }
    }
    word.text += this.src.slice(start, this.pos);
    this.sub(inner, (parser) => parser.parseSource());
  }

  /** `NAME=( ... )`: an array's elements, whose substitutions run. */
  private arrayValue(word: Word): void {
    const start = this.pos;
    this.pos++;
    word.literal = false;
    for (;;) {
      this.tick();
      this.skipBlanksAndNewlines();
      const c = this.peek();
      if (c === undefined) {
        this.unsure('an unterminated array');
        break;
      }
      if (c === ')') {
        this.pos++;
        break;
      }
      this.readArgument();
    }
    word.text += this.src.slice(start, this.pos);
  }

  // What a simple command runs

  private analyze(words: Word[]): void {
    analyzeCommand(words, {
      record: (unit) => this.out.commands.push(unit),
      unsure: (reason) => this.unsure(reason),
      script: (source) => this.sub(source, (parser) => parser.parseSource()),
    });
  }

  // Helpers

  /** Parses another source (a backquoted or `bash -c` string, a here-document) one level deeper. */
  private sub(source: string, parse: (parser: Parser) => void): void {
    if (this.depth + 1 > MAX_DEPTH) throw new TooComplex('the command nests too deeply to check');
    parse(new Parser(source, this.out, this.depth + 1));
  }

  private nested(parse: () => void): void {
    if (++this.depth > MAX_DEPTH) throw new TooComplex('the command nests too deeply to check');
    try {
      parse();
    } finally {
      this.depth--;
    }
  }

  private closeParen(what: string): void {
    if (this.peek() === ')') this.pos++;
    else this.unsure(`${what} without its closing \`)\``);
  }

  private skipBlanks(): void {
    for (;;) {
      const c = this.peek();
      // Only space and tab: bash reads a carriage return as part of a word, so `x \r# ; rm y` runs rm.
      if (c === ' ' || c === '\t') this.pos++;
      else if (c === '\\' && this.peek(1) === '\n') this.pos += 2;
      else if (c === '#') {
        const end = this.src.indexOf('\n', this.pos);
        this.pos = end === -1 ? this.src.length : end;
      } else return;
    }
  }

  private skipBlanksAndNewlines(): void {
    for (;;) {
      this.skipBlanks();
      if (this.peek() !== '\n') return;
      this.newline();
    }
  }

  /** A reserved word at the cursor, standing alone. */
  private atReservedWord(word: string): boolean {
    if (!this.src.startsWith(word, this.pos)) return false;
    const after = this.src[this.pos + word.length];
    return after === undefined || METACHARACTERS.has(after);
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.pos + offset];
  }

  private eof(): boolean {
    return this.pos >= this.src.length;
  }

  private unsure(reason: string): void {
    this.out.uncertain.push(reason);
  }

  private tick(): void {
    if (++this.out.steps > this.out.budget) throw new TooComplex('the command is too complex to check');
  }
}
