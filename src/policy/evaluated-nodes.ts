/**
 * The nodes of the grammar's tree where bash evaluates text a command could hide in: arithmetic
 * (`$(( ))`, `$[ ]`, `(( ))`, `for (( ))`, the arithmetic comparisons of `[[ ]]`, a substring's
 * offset and length), subscripts, `[[ -v NAME ]]`, an indirect expansion (`${!x}`), the `@P`
 * transformation, and assignments (`NAME=`, `NAME[i]=`, a `for` loop's) to the variables
 * bash-evaluation.ts names. The walk of the tree (split-commands.ts) asks about each node it meets;
 * bash-evaluation.ts says why each may run a command.
 */
import type { Node } from 'web-tree-sitter';
import {
  arithmeticReason,
  assignmentReason,
  found,
  subscriptReason,
  variableNameReason,
} from './bash-evaluation.js';
import { emptyWord, excerpt, type Word } from './shell-words.js';
import { unescapeDoubleQuoted, unquotedWord } from './tree-words.js';

/** The operators of `[[ ]]` that evaluate both sides as arithmetic. */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge']);

/** Why bash's evaluation of `node` (not of the nodes under it; its `type`, read once) may run a command. */
export function evaluatedNodeReasons(node: Node, type: string): string[] {
  switch (type) {
    case 'arithmetic_expansion':
      return found(arithmeticReason(node.text.replace(/^\$(?:\(\(|\[)|(?:\)\)|\])$/g, ''), node.text));
    case 'compound_statement':
      return node.firstChild?.type === '((' ? found(arithmeticReason(node.text)) : [];
    case 'c_style_for_statement': {
      // The header between `((` and `))`, without the word `for`.
      const open = node.children.find((child) => child?.type === '((');
      const close = node.children.find((child) => child?.type === '))');
      if (!open || !close) return [];
      const header = node.text.slice(open.startIndex - node.startIndex, close.endIndex - node.startIndex);
      return found(arithmeticReason(header, `for ${header}`));
    }
    case 'test_command':
      if (node.firstChild?.type === '((') return found(arithmeticReason(node.text));
      return node.firstChild?.type === '[[' ? conditionalReasons(node) : [];
    case 'subscript': {
      const index = node.childForFieldName('index');
      return index ? found(subscriptReason(index.text, node.text)) : [];
    }
    case 'expansion':
      return expansionReasons(node);
    case 'array':
      if (associativeDeclaration(node)) return [];
      return node.namedChildren.flatMap((element) => {
        const key = element ? /^\[([^\]]*)\]\+?=/s.exec(element.text)?.[1] : undefined;
        return key === undefined || !element ? [] : found(subscriptReason(key, element.text));
      });
    case 'variable_assignment': {
      // `PS4[0]=` sets the value bash reads as PS4.
      const target = node.childForFieldName('name');
      const name = target?.type === 'subscript' ? target.childForFieldName('name') : target;
      if (name?.type !== 'variable_name') return [];
      // `NAME+=x` gives a value made of one known only at run time.
      const appends = node.children.some((child) => child?.type === '+=');
      const value = appends ? undefined : (node.childForFieldName('value')?.text ?? '');
      return found(assignmentReason(name.text, value, node.text));
    }
    case 'for_statement': {
      // `for PS4 in ...` (and `select`) assigns each word of its list in turn.
      const name = node.childForFieldName('variable');
      return name ? found(assignmentReason(name.text, undefined)) : [];
    }
    default:
      return [];
  }
}

/** `declare -A m=([k]=v)`: the keys of an associative array are strings, not arithmetic. */
function associativeDeclaration(array: Node): boolean {
  const declaration = array.parent?.type === 'variable_assignment' ? array.parent.parent : null;
  return (
    declaration?.type === 'declaration_command' &&
    declaration.namedChildren.some((child) => child?.type === 'word' && /^-[A-Za-z]*A/.test(child.text))
  );
}

/** `[[ ]]`: the operands of its arithmetic comparisons, and the names `-v` tests. */
function conditionalReasons(node: Node): string[] {
  const reasons: string[] = [];
  const stack: Node[] = [node];
  while (stack.length > 0) {
    const top = stack.pop() as Node;
    const operator = top.childForFieldName('operator');
    if (top.type === 'binary_expression' && operator && ARITHMETIC_TESTS.has(operator.text)) {
      for (const side of ['left', 'right']) {
        const operand = top.childForFieldName(side);
        if (operand) reasons.push(...found(arithmeticReason(operand.text, top.text)));
      }
    } else if (top.type === 'unary_expression' && operator?.text === '-v') {
      const name = top.namedChildren.find((child) => child !== null && child.id !== operator.id);
      if (name) reasons.push(...found(variableNameReason('[[ -v', staticWord(name))));
    }
    for (const child of top.namedChildren) if (child) stack.push(child);
  }
  return reasons;
}

/** `${!x}` reads the variable x names; `${x@P}` expands x as a prompt; `${x:OFFSET:LENGTH}` is arithmetic. */
function expansionReasons(node: Node): string[] {
  const reasons: string[] = [];
  const children = node.children.filter((child): child is Node => child !== null);
  if (children[1]?.type === '!' && !listsNames(children.slice(2)))
    reasons.push(`an indirect expansion reads a variable named at run time: ${excerpt(node.text)}`);
  children.forEach((child, i) => {
    if (child.type === '@' && children[i + 1]?.text === 'P')
      reasons.push(
        `the @P transformation expands a value as a prompt, running its commands: ${excerpt(node.text)}`,
      );
  });
  const colon = children.find((child) => child.type === ':');
  const close = children.at(-1);
  if (colon && close?.type === '}') {
    const offset = node.text.slice(colon.endIndex - node.startIndex, close.startIndex - node.startIndex);
    reasons.push(...found(arithmeticReason(offset, node.text)));
  }
  return reasons;
}

/**
 * After `${!`: `NAME@`, `NAME*` (the names that start with NAME), `NAME[@]`, `NAME[*]` (an array's
 * keys) and `#` (the last positional parameter's number) name no variable through a value.
 */
function listsNames(rest: Node[]): boolean {
  const [target, next] = rest;
  if (target?.text === '#') return next?.type === '}';
  if (target?.type === 'variable_name')
    return (next?.type === '@' || next?.type === '*') && rest[2]?.type === '}';
  if (target?.type !== 'subscript') return false;
  const index = target.childForFieldName('index')?.text;
  return (index === '@' || index === '*') && next?.type === '}';
}

/** A word's text as bash reads it, when no expansion is in it; otherwise marked not literal. */
function staticWord(node: Node): Word {
  switch (node.type) {
    case 'word':
    case 'number':
      return unquotedWord(node.text);
    case 'raw_string':
      return { ...emptyWord(), text: node.text.slice(1, -1), quoted: true };
    case 'string':
      return node.namedChildren.every((child) => child?.type === 'string_content')
        ? { ...emptyWord(), text: unescapeDoubleQuoted(node.text.slice(1, -1)), quoted: true }
        : { ...emptyWord(), text: node.text, literal: false };
    case 'concatenation': {
      const word = emptyWord();
      for (const child of node.children) {
        if (!child) continue;
        const part = staticWord(child);
        word.text += part.text;
        word.literal &&= part.literal;
      }
      return word;
    }
    default:
      return { ...emptyWord(), text: node.text, literal: false };
  }
}
