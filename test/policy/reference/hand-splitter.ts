/**
 * Finds every simple command a bash command line can run: across `;`, `&&`, `||`, `|`, `&` and
 * newlines; inside subshells, groups, `if`/`while`/`for`/`case` bodies, command and process
 * substitutions (`$( )`, backquotes, `<( )`), expansions and unquoted here-documents; through
 * wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `time`, `coproc`, ...) and into the strings
 * that `bash -c`, `eval`, `su -c`, `env -S`, `watch`, `find -exec`, `trap` and `mapfile -C` run.
 * Pure: it never runs anything.
 *
 * Hand-written rather than taken from npm: `shell-quote` loses newlines, backquotes and
 * substitutions inside double quotes and accepts unbalanced quotes silently; `sh-syntax` 0.7
 * serialises a command's node as its position only; `bash-parser` is unmaintained since 2017 and
 * `mvdan-sh` is deprecated.
 *
 * Where bash could run something this cannot see (a command name computed at run time, an
 * unbalanced quote or parenthesis, an unterminated here-document, a command too deeply nested, a
 * shell or `source` reading its commands from standard input, an alias or `hash -p`),
 * it says why in `uncertain` rather than guess; callers treat that as needing approval or denial.
 */

/** One simple command bash may run. */
export interface CommandUnit {
  /**
   * The command's words, quotes removed (expansions stay as written, e.g. `$HOME`), once as
   * written after its leading assignments, then once for each wrapper it runs through:
   * `sudo nice rm x` gives `sudo nice rm x`, `nice rm x`, `rm x`.
   */
  layers: string[][];
}

export interface SplitCommands {
  commands: CommandUnit[];
  /** Why the split may have missed what bash runs; empty when it is certain. */
  uncertain: string[];
}

/** Nesting (substitutions, subshells, `bash -c` strings) deeper than this is not followed. */
const MAX_DEPTH = 32;

/** Parse steps per character of input before the command counts as too complex to check. */
const STEPS_PER_CHAR = 40;

export function splitCommands(source: string): SplitCommands {
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

interface Word {
  /** The word with quotes removed; expansions stay as written. */
  text: string;
  /** No expansion in it: `text` is exactly what bash passes. */
  literal: boolean;
  /** Some part was quoted or escaped (a quoted `if` is no keyword). */
  quoted: boolean;
  /** Unquoted glob or brace characters: bash may turn it into other words. */
  pattern: boolean;
  /** `NAME=value` (or `NAME+=`, `NAME[i]=`) with the name unquoted: an assignment, not a command. */
  assignment: boolean;
}

interface Heredoc {
  delimiter: string;
  stripTabs: boolean;
  /** Unquoted delimiter: the body's `$( )`, backquotes and `${ }` run. */
  expands: boolean;
}

type Until = 'end' | 'paren' | 'case';

const METACHARACTERS = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);
const ASSIGNMENT_NAME = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?$/;
const REDIRECTION = /^(?:\d+|\{[A-Za-z_][A-Za-z0-9_]*\})?(<<<|<<-|<<|<>|<&|<|>>|>&|>\||>|&>>|&>)/;
/** Reserved words that may open or continue a command without being one. */
const PASS_THROUGH_KEYWORDS = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'while',
  'until',
  'do',
  'done',
  'esac',
]);

/** Reserved words that open a compound command whose parts the parse reads as they come. */
const COMPOUND_OPENERS = new Set(['for', 'select', 'case', '[[', 'function']);

/** Wrapper layers (`sudo nice env ...`) followed before the command counts as too complex. */
const MAX_LAYERS = 16;

/** A command that gets words from its input: `xargs` (and what `{}` or `-I` stands for), `find -exec`. */
interface Feeder {
  name: string;
  /** The string replaced with what it reads (`{}`, or xargs' `-I` string); undefined for none. */
  replace: string | undefined;
}

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

  /**
   * Records a simple command with the commands it runs through wrappers, and parses the strings
   * it hands to a shell (`bash -c`, `eval`, ...).
   */
  private analyze(words: Word[], fedBy?: Feeder): void {
    let rest = dropAssignments(words);
    if (rest.length === 0) return;
    const unit: CommandUnit = { layers: [] };
    this.out.commands.push(unit);
    let feeder = fedBy;
    for (let layer = 0; rest.length > 0; layer++) {
      if (layer === MAX_LAYERS) {
        this.unsure('the command runs through too many wrappers to check');
        return;
      }
      const head = rest[0] as Word;
      unit.layers.push(rest.map((word) => word.text));
      if (!head.literal) {
        this.unsure(`the command name is computed at run time: ${head.text}`);
        return;
      }
      if (head.pattern) {
        this.unsure(`the command name is a pattern bash may expand: ${head.text}`);
        return;
      }
      const name = basename(head.text);
      if (feeder?.replace !== undefined && head.text.includes(feeder.replace)) {
        this.unsure(`the command name comes from what ${feeder.name} reads: ${head.text}`);
        return;
      }
      const step = unwrap(rest);
      switch (step.kind) {
        case 'none':
          // Under xargs, a wrapper with no command of its own runs the words xargs reads.
          if (feeder !== undefined && runsCommands(name)) {
            this.unsure(`${name} runs a command ${feeder.name} reads from its input`);
          }
          return;
        case 'wrapper': {
          if (name === 'xargs') feeder = { name, replace: xargsReplace(rest) };
          rest = dropAssignments(step.command);
          // `time { ...; }`, `coproc if ...`, `! cmd`: the command is the one the keyword opens.
          while (rest.length > 0 && isKeyword(rest[0] as Word, PASS_THROUGH_KEYWORDS)) rest = rest.slice(1);
          // `time for ...`, `time case ...`: the rest of the compound command is parsed as it comes.
          if (rest.length > 0 && isKeyword(rest[0] as Word, COMPOUND_OPENERS)) return;
          break;
        }
        case 'script': {
          if (step.script.some((word) => !word.literal)) {
            this.unsure(`${name} runs a string computed at run time`);
            return;
          }
          const script = step.script.map((word) => word.text).join(' ');
          if (feeder?.replace !== undefined && script.includes(feeder.replace)) {
            this.unsure(`${name} runs a string ${feeder.name} fills in from what it reads`);
            return;
          }
          this.sub(script, (parser) => parser.parseSource());
          return;
        }
        case 'commands':
          // find fills `{}` in with the names of the files it finds.
          for (const command of step.commands) this.analyze(command, { name, replace: '{}' });
          return;
        case 'unknown':
          this.unsure(step.reason);
          return;
        default: {
          const unreachable: never = step;
          throw new Error(`unexpected step ${JSON.stringify(unreachable)}`);
        }
      }
    }
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

function emptyWord(): Word {
  return { text: '', literal: true, quoted: false, pattern: false, assignment: false };
}

/** An unquoted reserved word from `words`. */
function isKeyword(word: Word, words: ReadonlySet<string>): boolean {
  return word.literal && !word.quoted && words.has(word.text);
}

function dropAssignments(words: Word[]): Word[] {
  let first = 0;
  while (first < words.length && (words[first] as Word).assignment) first++;
  return words.slice(first);
}

export function basename(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

// Wrappers: commands that run the rest of their arguments as a command (or as a shell string).

type Unwrapped =
  | { kind: 'none' }
  | { kind: 'wrapper'; command: Word[] }
  /** Words bash joins with spaces and runs as a script. */
  | { kind: 'script'; script: Word[] }
  | { kind: 'commands'; commands: Word[][] }
  | { kind: 'unknown'; reason: string };

interface OptionSpec {
  /** Short options that take an argument. */
  short: string;
  /** Long options that take an argument (unless given as `--name=value`). */
  long?: string[];
  /** `nice -10`: a number as an option. */
  numeric?: boolean;
  /** Operands before the command (`timeout DURATION`). */
  operands?: number;
}

const WRAPPERS: Record<string, OptionSpec> = {
  sudo: {
    short: 'ughpCDrtTUR',
    long: [
      'chroot',
      'user',
      'group',
      'host',
      'prompt',
      'close-from',
      'chdir',
      'role',
      'type',
      'command-timeout',
      'other-user',
    ],
  },
  doas: { short: 'uC' },
  nohup: { short: '' },
  time: { short: 'fo', long: ['format', 'output'] },
  nice: { short: 'n', long: ['adjustment'], numeric: true },
  ionice: { short: 'cn', long: ['class', 'classdata'] },
  timeout: { short: 'sk', long: ['signal', 'kill-after'], operands: 1 },
  stdbuf: { short: 'ioe', long: ['input', 'output', 'error'] },
  command: { short: '' },
  pkexec: { short: '', long: ['user'] },
  chroot: { short: '', long: ['userspec', 'groups'], operands: 1 },
  toybox: { short: '' },
  builtin: { short: '' },
  exec: { short: 'a' },
  coproc: { short: '' },
  setsid: { short: '' },
  unbuffer: { short: '' },
  busybox: { short: '' },
  chronic: { short: '' },
  xargs: {
    short: 'adEILnPs',
    long: [
      'arg-file',
      'delimiter',
      'eof',
      'replace',
      'max-lines',
      'max-args',
      'max-procs',
      'max-chars',
      'process-slot-var',
    ],
  },
};

const SHELLS = new Set([
  'bash',
  'sh',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'rbash',
  'fish',
  'csh',
  'tcsh',
  'yash',
  'posh',
]);

/** A path a shell or `source` reads its standard input through. */
const STDIN_PATH = /^(?:-|\/dev\/stdin|\/dev\/fd\/\d+|\/proc\/[^/]+\/fd\/\d+)$/;

function unwrap(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  if (name === 'eval')
    return { kind: 'script', script: words[1]?.text === '--' ? words.slice(2) : words.slice(1) };
  if (name === 'env') return unwrapEnv(words);
  if (SHELLS.has(name)) return unwrapShell(words);
  if (name === 'su' || name === 'runuser') return unwrapSu(words);
  if (name === 'watch') return unwrapWatch(words);
  if (name === 'find') return unwrapFind(words);
  if (name === 'source' || name === '.') return unwrapSource(words);
  if (name === 'trap') return unwrapTrap(words);
  if (name === 'mapfile' || name === 'readarray') return unwrapMapfile(words);
  if (name === 'alias' && words.slice(1).some((word) => word.text.includes('=')))
    return { kind: 'unknown', reason: 'an alias can give a command another name' };
  if (name === 'hash' && words.slice(1).some((word) => /^-[^-]*p/.test(word.text)))
    return { kind: 'unknown', reason: 'hash -p can give a command another name' };
  const spec = WRAPPERS[name];
  if (spec === undefined) return { kind: 'none' };
  const start = skipOptions(words, 1, spec);
  if (start === undefined)
    return { kind: 'unknown', reason: `the options of ${name} are computed at run time` };
  let command = words.slice(start + (spec.operands ?? 0));
  // sudo takes `NAME=value` words (quoted or not) before the command as its environment.
  if (name === 'sudo')
    while (/^[A-Za-z_][A-Za-z0-9_]*=/.test(command[0]?.text ?? '')) command = command.slice(1);
  // `coproc NAME { ...; }`: a name only before a compound command.
  if (name === 'coproc' && command.length > 1 && isKeyword(command[1] as Word, PASS_THROUGH_KEYWORDS))
    command = command.slice(1);
  return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
}

/** Whether a command runs the command its arguments name: a wrapper, env, a shell, su. */
function runsCommands(name: string): boolean {
  return (
    WRAPPERS[name] !== undefined ||
    SHELLS.has(name) ||
    ['env', 'su', 'runuser', 'watch', 'find', 'eval'].includes(name)
  );
}

/** The string `xargs -I R` (or `-i`, `--replace`) replaces, if any. */
function xargsReplace(words: Word[]): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (text === '--' || !text.startsWith('-')) return undefined;
    if (text === '-I' || text === '--replace') return text === '-I' ? words[i + 1]?.text : '{}';
    const attached = /^(?:-I|-i|--replace=)(.*)$/s.exec(text);
    if (attached) return attached[1] === '' ? '{}' : attached[1];
  }
  return undefined;
}

/** The index of the first word after `from` that is not an option, or undefined if one is computed. */
function skipOptions(words: Word[], from: number, spec: OptionSpec): number | undefined {
  let i = from;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return undefined;
    const text = word.text;
    if (text === '--') return i + 1;
    if (!text.startsWith('-') || text === '-') return i;
    if (spec.numeric && /^-\d+$/.test(text)) {
      i++;
    } else if (text.startsWith('--')) {
      const name = text.slice(2);
      i += !name.includes('=') && spec.long?.includes(name) ? 2 : 1;
    } else {
      i += shortOptionWords(text, spec.short);
    }
  }
  return i;
}

/** How many words a cluster of short options like `-un` or `-uroot` takes: 2 when its argument follows. */
function shortOptionWords(cluster: string, withArgument: string): number {
  for (let j = 1; j < cluster.length; j++) {
    if (withArgument.includes(cluster[j] as string)) return j === cluster.length - 1 ? 2 : 1;
  }
  return 1;
}

/** `env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]... COMMAND`; short options cluster (`-iS`). */
function unwrapEnv(words: Word[]): Unwrapped {
  const computed: Unwrapped = { kind: 'unknown', reason: 'the arguments of env are computed at run time' };
  let i = 1;
  while (i < words.length) {
    const word = words[i] as Word;
    if (!word.literal) return computed;
    const text = word.text;
    if (text === '--') {
      i++;
      break;
    }
    /** `-S STRING`: the string (attached, or the next word), split into the command's words. */
    let split: Word | undefined;
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const long = eq === -1 ? text.slice(2) : text.slice(2, eq);
      const takesNext = eq === -1 && ['split-string', 'unset', 'chdir'].includes(long);
      if (long === 'split-string') split = eq === -1 ? words[i + 1] : { ...word, text: text.slice(eq + 1) };
      i += takesNext ? 2 : 1;
    } else if (text.startsWith('-') && text !== '-') {
      let taken = 1;
      for (let j = 1; j < text.length; j++) {
        const option = text[j] as string;
        if (!'SuC'.includes(option)) continue;
        const value = text.slice(j + 1);
        if (value === '') taken = 2;
        if (option === 'S') split = value === '' ? words[i + 1] : { ...word, text: value };
        break;
      }
      i += taken;
    } else if (text === '-') {
      i++;
    } else if (/^[^=]+=/.test(text)) {
      // Bash imports `BASH_FUNC_name%%=() { ...; }` from its environment as a function.
      if (text.startsWith('BASH_FUNC_'))
        return { kind: 'unknown', reason: 'env defines a shell function through the environment' };
      i++;
    } else {
      break;
    }
    if (split !== undefined) {
      const rest = words.slice(i);
      if (!split.literal || rest.some((w) => !w.literal)) return computed;
      return {
        kind: 'script',
        script: [{ ...split, text: [split.text, ...rest.map((w) => shellQuote(w.text))].join(' ') }],
      };
    }
  }
  const command = words.slice(i);
  return command.length > 0 ? { kind: 'wrapper', command } : { kind: 'none' };
}

/** `bash [options] -c STRING [NAME [ARGS]]`: the string is a script; without `-c`, a script file. */
function unwrapShell(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  let command = false;
  /** `-s`, or a lone `-`: the commands come from standard input. */
  let stdin = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) {
      // After `-c`, the string to run; before it, options or a script file bash cannot tell apart here.
      if (command) break;
      return { kind: 'unknown', reason: 'the options of a shell are computed at run time' };
    }
    const text = word.text;
    if (text === '--' || text === '-') {
      stdin ||= text === '-';
      i++;
      break;
    }
    if (text.startsWith('--')) {
      if (text === '--version' || text === '--help') return { kind: 'none' };
      if (text === '--rcfile' || text === '--init-file') i++;
      continue;
    }
    if (!/^[-+]/.test(text)) break;
    if (text[0] === '-' && text.includes('c')) command = true;
    if (text[0] === '-' && text.includes('s')) stdin = true;
    if (/[oO]/.test(text)) i++;
  }
  const operand = words[i];
  if (!command) {
    // A shell with no script, or one reading /dev/stdin, runs what a pipe or here-document holds.
    if (stdin || operand === undefined || STDIN_PATH.test(operand.text))
      return { kind: 'unknown', reason: `${name} reads its commands from standard input` };
    return { kind: 'none' };
  }
  return operand === undefined ? { kind: 'none' } : { kind: 'script', script: [operand] };
}

/** `su [options] -c COMMAND [user]` (also `--session-command`); `runuser -u USER [--] COMMAND...` */
function unwrapSu(words: Word[]): Unwrapped {
  const name = basename((words[0] as Word).text);
  for (let i = 1; i < words.length; i++) {
    const text = (words[i] as Word).text;
    if (!(words[i] as Word).literal)
      return { kind: 'unknown', reason: `the arguments of ${name} are computed at run time` };
    const attached = /^(?:--command=|--session-command=|-c(?=.))(.*)$/s.exec(text);
    if (attached) return { kind: 'script', script: [{ ...(words[i] as Word), text: attached[1] as string }] };
    if (text === '-c' || text === '--command' || text === '--session-command') {
      const script = words[i + 1];
      return script === undefined ? { kind: 'none' } : { kind: 'script', script: [script] };
    }
  }
  if (name === 'runuser' && words.some((word) => /^(?:-u|--user(?:=|$))/.test(word.text))) {
    const start = skipOptions(words, 1, {
      short: 'ugGsw',
      long: ['user', 'group', 'supp-group', 'shell', 'whitelist-environment'],
    });
    const command = start === undefined ? [] : words.slice(start);
    if (command.length > 0) return { kind: 'wrapper', command };
  }
  return { kind: 'none' };
}

/** `source FILE` / `. FILE`: a file is not read here, but a computed name or standard input is refused. */
function unwrapSource(words: Word[]): Unwrapped {
  const file = words[1]?.text === '--' ? words[2] : words[1];
  if (file === undefined) return { kind: 'none' };
  if (!file.literal) return { kind: 'unknown', reason: 'source reads a file named at run time' };
  if (STDIN_PATH.test(file.text) && file.text !== '-')
    return { kind: 'unknown', reason: 'source reads its commands from standard input' };
  return { kind: 'none' };
}

/** `trap [--] ACTION SIGNAL...`: the action is a string bash runs later. */
function unwrapTrap(words: Word[]): Unwrapped {
  const start = words[1]?.text === '--' ? 2 : 1;
  const action = words[start];
  // One operand is a signal to reset; `-` resets too; `-l` and `-p` only print.
  if (action === undefined || words.length - start < 2 || /^-[lpP]*$/.test(action.text))
    return { kind: 'none' };
  return { kind: 'script', script: [action] };
}

/** `mapfile -C CALLBACK` (or `readarray`): a string bash runs for every few lines read. */
function unwrapMapfile(words: Word[]): Unwrapped {
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    if (!word.literal) return { kind: 'unknown', reason: 'the options of mapfile are computed at run time' };
    const text = word.text;
    if (text === '--' || !text.startsWith('-')) break;
    for (let j = 1; j < text.length; j++) {
      const option = text[j] as string;
      if (!'CdunOcs'.includes(option)) continue;
      const value = text.slice(j + 1);
      const argument = value === '' ? words[++i] : { ...word, text: value };
      if (option === 'C')
        return argument === undefined ? { kind: 'none' } : { kind: 'script', script: [argument] };
      break;
    }
  }
  return { kind: 'none' };
}

/** `watch [options] COMMAND...`: runs `sh -c` with the words joined by spaces. */
function unwrapWatch(words: Word[]): Unwrapped {
  const start = skipOptions(words, 1, {
    short: 'nqd',
    long: ['interval', 'differences', 'equexit', 'errexit', 'beep', 'no-title'],
  });
  if (start === undefined)
    return { kind: 'unknown', reason: 'the options of watch are computed at run time' };
  const script = words.slice(start);
  return script.length > 0 ? { kind: 'script', script } : { kind: 'none' };
}

/** `find ... -exec COMMAND ;` (and `-execdir`, `-ok`, `-okdir`, ending in `;` or `+`). */
function unwrapFind(words: Word[]): Unwrapped {
  const commands: Word[][] = [];
  for (let i = 1; i < words.length; i++) {
    if (!/^-(exec|execdir|ok|okdir)$/.test((words[i] as Word).text)) continue;
    const command: Word[] = [];
    for (i++; i < words.length && !/^[;+]$/.test((words[i] as Word).text); i++)
      command.push(words[i] as Word);
    if (command.length > 0) commands.push(command);
  }
  return commands.length > 0 ? { kind: 'commands', commands } : { kind: 'none' };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Decodes the body of `$'...'` from `start` (after the quote); undefined when it never closes. */
function decodeAnsiC(src: string, start: number): { text: string; end: number } | undefined {
  const simple: Record<string, string> = {
    a: '\x07',
    b: '\b',
    e: '\x1b',
    E: '\x1b',
    f: '\f',
    n: '\n',
    r: '\r',
    t: '\t',
    v: '\v',
    '\\': '\\',
    "'": "'",
    '"': '"',
    '?': '?',
  };
  let text = '';
  let i = start;
  while (i < src.length) {
    const c = src[i] as string;
    if (c === "'") return { text, end: i + 1 };
    if (c !== '\\') {
      text += c;
      i++;
      continue;
    }
    const next = src[i + 1];
    if (next === undefined) return undefined;
    const simpleEscape = simple[next];
    if (simpleEscape !== undefined) {
      text += simpleEscape;
      i += 2;
      continue;
    }
    const numeric = numericEscape(src, i);
    if (numeric !== undefined) {
      text += numeric.code <= 0x10ffff ? String.fromCodePoint(numeric.code) : '';
      i += numeric.length;
      continue;
    }
    if (next === 'c' && src[i + 2] !== undefined) {
      text += String.fromCharCode((src[i + 2] as string).charCodeAt(0) & 0x1f);
      i += 3;
      continue;
    }
    text += `\\${next}`;
    i += 2;
  }
  return undefined;
}

/** `\NNN` (octal), `\xHH`, `\uHHHH` or `\UHHHHHHHH` at `i`: the code point and the escape's length. */
function numericEscape(src: string, i: number): { code: number; length: number } | undefined {
  const forms: [RegExp, number, number][] = [
    [/^\\([0-7]{1,3})/, 8, 1],
    [/^\\x([0-9a-fA-F]{1,2})/, 16, 2],
    [/^\\u([0-9a-fA-F]{1,4})/, 16, 2],
    [/^\\U([0-9a-fA-F]{1,8})/, 16, 2],
  ];
  const rest = src.slice(i, i + 10);
  for (const [form, radix, prefix] of forms) {
    const digits = form.exec(rest)?.[1];
    if (digits !== undefined) return { code: Number.parseInt(digits, radix), length: prefix + digits.length };
  }
  return undefined;
}
