/**
 * Finds every simple command a bash command line can run: across `;`, `&&`, `||`, `|`, `&` and
 * newlines; inside subshells, groups, `if`/`while`/`for`/`case` bodies, function bodies, command and
 * process substitutions (`$( )`, backquotes, `<( )`), expansions and unquoted here-documents;
 * through wrappers (`sudo`, `env`, `nohup`, `timeout`, `xargs`, `time`, `coproc`, ...) and into the
 * strings that `bash -c`, `eval`, `su -c`, `env -S`, `watch`, `find -exec`, `trap` and `mapfile -C`
 * run. Pure: it never runs anything.
 *
 * tree-sitter-bash gives the tree (bash-grammar.ts); this walk keeps what the grammar cannot know:
 * the wrappers and the strings handed to a shell (command-wrappers.ts), backquotes read again once
 * unescaped, ANSI-C quoting, single quotes that bash expands inside `$(( ))` and `"${ }"`, depth
 * limits, and the `uncertain` contract. Where bash could run something this cannot see (a syntax
 * error or a construct the grammar misreads, a command name computed at run time, a command too
 * deeply nested, a shell or `source` reading its commands from standard input, an alias or
 * `hash -p`), it says why in `uncertain` rather than guess; callers treat that as needing approval
 * or denial, never as allowed. What the grammar misreads, and how each case ends uncertain or is
 * read again, is in grammar-misreads.ts and docs/PERMISSIONS.md. One file: it is one walk, a case
 * per kind of statement node (words are read by tree-words.ts).
 */
import type { Node } from 'web-tree-sitter';
import { type BashGrammar, loadBashGrammar } from './bash-grammar.js';
import { analyzeCommand, type CommandUnit } from './command-layers.js';
import { assignedCommand, isCommandVariable } from './command-variables.js';
import { evaluatedNodeReasons } from './evaluated-nodes.js';

export type { CommandUnit } from './command-layers.js';

import {
  escapedBlankBefore,
  heredocEndMisreads,
  misreadToken,
  STATEMENTS,
  syntaxErrors,
} from './grammar-misreads.js';
import { COMPOUND_OPENERS, emptyWord, isKeyword, PASS_THROUGH_KEYWORDS, type Word } from './shell-words.js';
import { arithmetic, backquoted, type Context, nested, WordReader, Words } from './tree-words.js';

export interface SplitCommands {
  commands: CommandUnit[];
  /** Why the split may have missed what bash runs; empty when it is certain. */
  uncertain: string[];
}

/** Nesting (substitutions, subshells, `bash -c` strings) deeper than this is not followed. */
const MAX_DEPTH = 32;
/** Tree depth past which the walk stops: a tree this deep is not a command line a person wrote. */
const MAX_TREE_DEPTH = 1_000;
/** Nodes walked per character of input before the command counts as too complex to check. */
const NODES_PER_CHAR = 40;

export async function splitCommands(source: string): Promise<SplitCommands> {
  return splitWith(await loadBashGrammar(), source);
}

/** `splitCommands` with a grammar already loaded (`loadBashGrammar`): synchronous. */
export function splitWith(grammar: BashGrammar, source: string): SplitCommands {
  const out: Output = {
    grammar,
    commands: [],
    uncertain: [],
    nodes: 0,
    budget: 10_000 + NODES_PER_CHAR * source.length,
  };
  if (source.includes(CARRIAGE_RETURN_STAND_IN))
    out.uncertain.push('a private-use character U+E00D, which this check stands in for a carriage return');
  try {
    readSource(out, source.replaceAll('\r', CARRIAGE_RETURN_STAND_IN), 0);
  } catch (err) {
    if (!(err instanceof TooComplex)) throw err;
    out.uncertain.push(err.message);
  }
  const restored = (text: string) => text.replaceAll(CARRIAGE_RETURN_STAND_IN, '\r');
  return {
    commands: out.commands.map((unit) => ({ layers: unit.layers.map((words) => words.map(restored)) })),
    uncertain: [...new Set(out.uncertain.map(restored))],
  };
}

/**
 * Bash reads a carriage return as part of a word (`true \r# ; rm x` runs rm); the grammar reads it
 * as a blank, which would make `# ; rm x` a comment. The parse sees this character in its place.
 */
const CARRIAGE_RETURN_STAND_IN = '\uE00D';

interface Output {
  grammar: BashGrammar;
  commands: CommandUnit[];
  uncertain: string[];
  nodes: number;
  budget: number;
}

/** Stops the walk: the rest of the command is not checked. */
class TooComplex extends Error {}

/** Parses `source` (the line, a `bash -c` string, a backquoted body) and walks its tree. */
function readSource(out: Output, source: string, depth: number): void {
  if (depth > MAX_DEPTH) throw new TooComplex('the command nests too deeply to check');
  const tree = out.grammar.parse(source);
  if (tree === undefined) throw new TooComplex('the command is too complex to check');
  try {
    const root = tree.rootNode;
    if (root.hasError) for (const reason of syntaxErrors(root, source)) out.uncertain.push(reason);
    new Walk(out, source).node(root, { depth, treeDepth: 0, singleQuotesExpand: false });
  } finally {
    tree.delete();
  }
}

/** The nodes that stand for one word (or part of one) of a command. */
const WORD_NODES = new Set([
  'word',
  'number',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'concatenation',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'brace_expression',
  'extglob_pattern',
]);

class Walk extends WordReader {
  constructor(
    private readonly out: Output,
    source: string,
  ) {
    super(source);
  }

  /** Finds the commands under `node`, in the order bash runs them. */
  node(node: Node, outer: Context): void {
    const at = { ...outer, treeDepth: outer.treeDepth + 1 };
    this.tick(at);
    if (!node.isNamed) {
      const misread = misreadToken(node, this.source);
      if (misread) this.unsure(misread);
      return;
    }
    const type = node.type;
    for (const reason of evaluatedNodeReasons(node, type)) this.unsure(reason);
    if (STATEMENTS.has(type) && escapedBlankBefore(node, this.source))
      this.unsure(
        `an escaped blank before \`${node.text.slice(0, 8)}\`: bash reads it as part of a command name`,
      );
    switch (type) {
      case 'comment':
        // `\ # ; rm x`: bash reads a word ` #`, then runs rm; the grammar drops the `\ ` and reads
        // a comment. What follows is read again with the `#` escaped.
        if (escapedBlankBefore(node, this.source)) {
          this.unsure('an escaped blank before `#`: bash reads a word there, not a comment');
          readSource(this.out, `\\${node.text}`, at.depth + 1);
        }
        return;
      case 'command':
        this.command(node, at, []);
        return;
      case 'variable_assignment':
        this.assignment(node, at);
        return;
      case 'redirected_statement':
        this.redirected(node, at);
        return;
      case 'declaration_command':
      case 'unset_command':
        // `export`, `declare`, `local`, `readonly`, `typeset`, `unset`: commands with their words.
        this.record(this.childWords(node, at), at);
        return;
      case 'test_command':
        this.test(node, at);
        return;
      case 'compound_statement':
        // `(( ... ))` is arithmetic; `{ ...; }` a group. Bash reads `{` followed by no blank as a
        // word (`{}` is a command named `{}`); the grammar reads a group.
        if (node.firstChild?.type === '{' && !/[\s]/.test(this.source[node.startIndex + 1] ?? ' '))
          this.unsure(`\`${node.text.slice(0, 2)}\` is a word to bash, not the start of a group`);
        this.children(node, node.firstChild?.type === '((' ? arithmetic(at) : at);
        return;
      case 'c_style_for_statement':
      case 'arithmetic_expansion':
        this.children(node, arithmetic(at));
        return;
      case 'subshell':
      case 'process_substitution':
        this.children(node, nested(at));
        return;
      case 'command_substitution':
        this.substitution(node, at);
        return;
      case 'raw_string':
        if (at.singleQuotesExpand && /[$`]/.test(node.text))
          this.unsure(`a single-quoted string where bash expands it: ${node.text}`);
        return;
      case 'parenthesized_expression': {
        const before = node.previousSibling;
        if (
          at.conditional &&
          (before?.type === '<' || before?.type === '>') &&
          before.endIndex === node.startIndex
        ) {
          readSource(this.out, node.text.slice(1, -1), at.depth + 1);
          return;
        }
        this.children(node, at);
        return;
      }
      case 'list':
      case 'pipeline':
        for (const part of flatten(node)) this.node(part, at);
        return;
      case 'ERROR':
        this.error(node, at);
        return;
      case 'heredoc_redirect':
        this.heredocRedirect(node, at);
        return;
      case 'heredoc_body':
        this.heredocBody(node, at);
        return;
      case 'heredoc_end':
        for (const reason of heredocEndMisreads(node, this.source)) this.unsure(reason);
        return;
      case 'heredoc_start':
        // A quoted delimiter may span lines or go on after its quote (`'EOF'x`); the grammar cuts it.
        if (/[^\s;&|<>()]/.test(this.source[node.endIndex] ?? ' '))
          this.unsure(`a here-document delimiter the grammar cuts short: ${node.text}`);
        if (
          /\n/.test(node.text) ||
          (node.text.match(/'/g) ?? []).length % 2 === 1 ||
          (node.text.match(/"/g) ?? []).length % 2 === 1
        )
          this.unsure(`a here-document delimiter the grammar cannot read: ${node.text}`);
        return;
      case 'file_redirect':
        // Not a simple command's (those are read in `command`): words after its target are an error.
        if (this.fileRedirect(node, at, new Words()).list.length > 0)
          this.unsure(`words after a redirection of a compound command: ${node.text}`);
        return;
      default:
        this.children(node, at);
    }
  }

  private children(node: Node, at: Context): void {
    for (const child of node.children) if (child) this.node(child, at);
  }

  /**
   * A simple command: its words (their substitutions first), then the here-documents it reads.
   * `redirects` are those the grammar put around it (`rm > f x` is a command and a redirection).
   */
  private command(node: Node, at: Context, redirects: Node[]): void {
    const words = new Words();
    const heredocs: Node[] = [];
    for (const child of [...node.children, ...redirects]) {
      if (!child) continue;
      if (child.type === 'variable_assignment') {
        // Kept (analyzeCommand drops it), so a reserved word after it counts as the command name.
        this.node(child, at);
        words.add(child, { ...emptyWord(), text: child.text, literal: false, assignment: true });
      } else if (child.type === 'subshell') {
        // `if (a)` after an assignment, `x (a)`: the grammar takes a subshell as a word; bash refuses it.
        this.unsure(`a subshell after a command word: ${child.text}`);
        this.node(child, at);
        words.gap();
      } else if (child.type === 'heredoc_redirect') {
        heredocs.push(child);
      } else if (child.type === 'file_redirect') {
        this.fileRedirect(child, at, words);
      } else if (child.type.endsWith('_redirect')) {
        this.node(child, at);
        words.gap();
      } else if (child.isNamed) {
        this.addArgument(words, child, at);
      }
    }
    // `cat <<EOF x`: the words after a here-document's delimiter are the command's too.
    for (const heredoc of heredocs) {
      words.gap();
      heredoc.children.forEach((child, i) => {
        if (child && heredoc.fieldNameForChild(i) === 'argument') this.addArgument(words, child, at);
      });
    }
    this.record(words.list, at);
    for (const heredoc of heredocs) this.node(heredoc, at);
  }

  private redirected(node: Node, at: Context): void {
    const body = node.childForFieldName('body');
    const redirects = node.children.filter((child): child is Node => child !== null && child.id !== body?.id);
    if (body?.type === 'command') {
      this.command(body, at, redirects);
      return;
    }
    if (body) this.node(body, at);
    for (const redirect of redirects) this.node(redirect, at);
  }

  /**
   * Walks a redirection's target, and adds to `words` the words the grammar put after it: bash
   * reads them as more arguments of the command (`rm > f x` runs `rm x`).
   */
  private fileRedirect(node: Node, at: Context, words: Words): Words {
    const [target, ...more] = node.namedChildren.filter(
      (child): child is Node => child !== null && child.type !== 'file_descriptor',
    );
    if (target) this.node(target, at);
    words.gap();
    for (const word of more) this.addArgument(words, word, at);
    return words;
  }

  /**
   * `[ ... ]` is the command `[` with its words; `[[ ... ]]` and `(( ... ))` run only their
   * substitutions. The grammar reads `[`'s words as an expression (and drops the `\ ` of
   * `[ -\ x ]`), so its text is read again with the `[` escaped: a plain command, word for word.
   */
  private test(node: Node, at: Context): void {
    const opener = node.firstChild?.type;
    // After a dropped `\ `, bash's command is ` [`.
    const name = escapedBlankBefore(node, this.source) ? "' ['" : '\\[';
    if (opener === '[') readSource(this.out, name + node.text.slice(1), at.depth + 1);
    else this.children(node, opener === '((' ? arithmetic(at) : { ...at, conditional: true });
  }

  /** Words of a declaration (`export A=$(x) B`): the keyword, then each word as written. */
  private childWords(node: Node, at: Context): Word[] {
    const words = new Words();
    for (const child of node.children) {
      if (!child || child.type === 'comment') continue;
      if (child.type === 'variable_assignment') {
        this.node(child, at);
        words.add(child, { ...emptyWord(), text: child.text, literal: false, asWritten: true });
      } else {
        this.addArgument(words, child, at);
      }
    }
    return words.list;
  }

  /**
   * An assignment. The value of a command variable (command-variables.ts: `GIT_EDITOR='rm x'`,
   * before a command, alone or in `export`) is read as the command a program runs later; one
   * known only at run time (computed, appended to, an array's element) makes the line uncertain.
   */
  private assignment(node: Node, at: Context): void {
    const target = node.childForFieldName('name');
    const name = target?.type === 'subscript' ? target.childForFieldName('name') : target;
    if (!target || !name || !isCommandVariable(name.text)) {
      this.children(node, at);
      return;
    }
    this.node(target, at);
    const valueNode = node.childForFieldName('value');
    // Read as a word, which walks the substitutions it holds.
    const value = valueNode ? this.word(valueNode, at) : emptyWord();
    const whole = target === name && !node.children.some((child) => child?.type === '+=');
    const held = assignedCommand(name.text, whole ? value : undefined, node.text);
    if (held === undefined) return;
    if ('reason' in held) this.unsure(held.reason);
    else readSource(this.out, held.source, at.depth + 1);
  }

  /** `$( )` is walked where it stands; a backquoted body is found, unescaped and read as bash does. */
  private substitution(node: Node, at: Context): void {
    const text = node.text;
    if (text.startsWith('$((') && text.endsWith('))')) {
      // In a here-document the grammar reads `$((x))` as `$( (x) )`; bash reads arithmetic.
      readSource(this.out, `((${text.slice(3, -2)}))`, at.depth + 1);
      return;
    }
    if (!text.startsWith('`')) {
      this.children(node, nested(at));
      return;
    }
    // Bash ends a backquoted body at the next unescaped backquote: `` `a``b` `` is two substitutions.
    for (const body of backquoted(text, () => this.unsure('an unterminated backquote')))
      readSource(this.out, body, at.depth + 1);
  }

  /**
   * What the grammar could not read. Its statements are walked as usual, and each run of words
   * in it counts as a command too, so a deny rule still sees what may run there.
   */
  private error(node: Node, at: Context): void {
    let run = new Words();
    const flush = () => {
      this.record(run.list, at);
      run = new Words();
    };
    for (const child of node.children) {
      if (!child) continue;
      if (WORD_NODES.has(child.type) || child.type === 'string_content' || child.type === 'variable_name') {
        this.addArgument(run, child, at);
      } else {
        flush();
        if (child.isNamed) this.node(child, at);
      }
    }
    flush();
  }

  /**
   * Records a simple command. A reserved word as its name means the grammar misread a compound
   * command (`time for ...; do rm x; done` gives `do rm x`): the words after it are the command,
   * and an opener (`for`, `case`, ...) there makes the line uncertain.
   */
  private record(words: Word[], at: Context): void {
    let rest = words;
    while (rest.length > 0 && isKeyword(rest[0] as Word, PASS_THROUGH_KEYWORDS)) rest = rest.slice(1);
    if (rest.length > 0 && isKeyword(rest[0] as Word, COMPOUND_OPENERS)) {
      this.unsure(`the grammar read the reserved word \`${(rest[0] as Word).text}\` as a command`);
      rest = rest.slice(1);
    }
    if (rest.length === 0) return;
    analyzeCommand(rest, {
      record: (unit) => this.out.commands.push(unit),
      unsure: (reason) => this.unsure(reason),
      script: (source) => readSource(this.out, source, at.depth + 1),
    });
  }

  /**
   * A here-document: what follows its delimiter on its line (the command's words, read in
   * `command`, or more redirections and commands), then its body. The grammar reads a body that
   * starts with `\(` as words and a comment, with no error: anything but the body after the
   * delimiter's line makes the line uncertain.
   */
  private heredocRedirect(node: Node, at: Context): void {
    const start = node.children.find((child) => child?.type === 'heredoc_start');
    const lineEnd = start ? this.source.indexOf('\n', start.endIndex) : -1;
    node.children.forEach((child, i) => {
      if (!child || node.fieldNameForChild(i) === 'argument') {
        if (child && lineEnd !== -1 && child.endIndex > lineEnd)
          this.unsure(`a here-document body the grammar reads as words: ${child.text.trim()}`);
        return;
      }
      const inBody = child.type === 'heredoc_body' || child.type === 'heredoc_end';
      if (!inBody && lineEnd !== -1 && child.startIndex > lineEnd)
        this.unsure(`a here-document body the grammar reads as code: ${child.text}`);
      this.node(child, at);
    });
  }

  /**
   * An unquoted here-document's body: its `$( )` and `${ }` are in the tree; its backquotes are
   * not, so the text between them is scanned for those. A quoted one runs nothing.
   */
  private heredocBody(node: Node, at: Context): void {
    const start = node.parent?.children.find((child) => child?.type === 'heredoc_start');
    if (start && /["'\\]/.test(start.text)) return;
    let from = node.startIndex;
    const scan = (to: number) => {
      for (const body of backquoted(this.source.slice(from, to), () =>
        this.unsure('an unterminated backquote'),
      ))
        readSource(this.out, body, at.depth + 1);
    };
    for (const part of node.namedChildren) {
      if (!part || part.type === 'heredoc_content') continue;
      scan(part.startIndex);
      this.node(part, at);
      from = part.endIndex;
    }
    scan(node.endIndex);
  }

  // Helpers

  protected unsure(reason: string): void {
    this.out.uncertain.push(reason);
  }

  private tick(at: Context): void {
    if (++this.out.nodes > this.out.budget) throw new TooComplex('the command is too complex to check');
    if (at.treeDepth > MAX_TREE_DEPTH || at.depth > MAX_DEPTH)
      throw new TooComplex('the command nests too deeply to check');
  }
}

/** The statements of a list or pipeline, nested ones included, in order; iterative, so a long `a && b && ...` never deepens the walk. */
function flatten(node: Node): Node[] {
  const statements: Node[] = [];
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const top = stack.pop() as Node;
    if (top.type === 'list' || top.type === 'pipeline') {
      for (let i = top.childCount - 1; i >= 0; i--) {
        const child = top.child(i);
        if (child?.isNamed) stack.push(child);
      }
    } else {
      statements.push(top);
    }
  }
  return statements;
}
