/**
 * A simple command's layers: its words as written, then once for each wrapper it runs through
 * (`sudo nice rm x` gives `sudo nice rm x`, `nice rm x`, `rm x`), with the strings it hands a shell
 * passed on to be read (command-wrappers.ts says which commands wrap what).
 */
import { builtinEvaluations } from './bash-evaluation.js';
import { runsCommands, unwrap, xargsReplace } from './command-wrappers.js';
import {
  basename,
  COMPOUND_OPENERS,
  dropAssignments,
  isKeyword,
  PASS_THROUGH_KEYWORDS,
  type Word,
} from './shell-words.js';

/** One simple command bash may run. */
export interface CommandUnit {
  /**
   * The command's words, quotes removed (expansions stay as written, e.g. `$HOME`), once as
   * written after its leading assignments, then once for each wrapper it runs through:
   * `sudo nice rm x` gives `sudo nice rm x`, `nice rm x`, `rm x`.
   */
  layers: string[][];
}

/** Wrapper layers (`sudo nice env ...`) followed before the command counts as too complex. */
const MAX_LAYERS = 16;

/** Where `analyzeCommand` puts what it finds. */
export interface CommandReader {
  record(unit: CommandUnit): void;
  unsure(reason: string): void;
  /** A string a shell runs (`bash -c`, `eval`, ...): its commands are read one level deeper. */
  script(source: string): void;
}

/** A command that gets words from its input: `xargs` (and what `{}` or `-I` stands for), `find -exec`. */
export interface Feeder {
  name: string;
  /** The string replaced with what it reads (`{}`, or xargs' `-I` string); undefined for none. */
  replace: string | undefined;
}

/**
 * Records a simple command with the commands it runs through wrappers, and hands the strings it
 * gives a shell (`bash -c`, `eval`, ...) to `reader.script`.
 */
export function analyzeCommand(words: Word[], reader: CommandReader, fedBy?: Feeder): void {
  let rest = dropAssignments(words);
  if (rest.length === 0) return;
  const unit: CommandUnit = { layers: [] };
  reader.record(unit);
  let feeder = fedBy;
  for (let layer = 0; rest.length > 0; layer++) {
    if (layer === MAX_LAYERS) {
      reader.unsure('the command runs through too many wrappers to check');
      return;
    }
    const head = rest[0] as Word;
    unit.layers.push(rest.map((word) => word.text));
    if (!head.literal) {
      reader.unsure(`the command name is computed at run time: ${head.text}`);
      return;
    }
    if (head.pattern) {
      reader.unsure(`the command name is a pattern bash may expand: ${head.text}`);
      return;
    }
    const evaluated = builtinEvaluations(rest);
    for (const reason of evaluated.reasons) reader.unsure(reason);
    for (const script of evaluated.scripts) reader.script(script);
    const name = basename(head.text);
    if (feeder?.replace !== undefined && head.text.includes(feeder.replace)) {
      reader.unsure(`the command name comes from what ${feeder.name} reads: ${head.text}`);
      return;
    }
    const step = unwrap(rest);
    switch (step.kind) {
      case 'none':
        // Under xargs, a wrapper with no command of its own runs the words xargs reads.
        if (feeder !== undefined && runsCommands(name)) {
          reader.unsure(`${name} runs a command ${feeder.name} reads from its input`);
        }
        return;
      case 'wrapper': {
        for (const script of step.scripts ?? []) {
          if (!script.literal) {
            reader.unsure(`${name} runs a string computed at run time`);
            return;
          }
          reader.script(script.text);
        }
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
          reader.unsure(`${name} runs a string computed at run time`);
          return;
        }
        const script = step.script.map((word) => word.text).join(' ');
        if (feeder?.replace !== undefined && script.includes(feeder.replace)) {
          reader.unsure(`${name} runs a string ${feeder.name} fills in from what it reads`);
          return;
        }
        reader.script(script);
        return;
      }
      case 'commands':
        // find fills `{}` in with the names of the files it finds.
        for (const command of step.commands) analyzeCommand(command, reader, { name, replace: '{}' });
        return;
      case 'unknown':
        reader.unsure(step.reason);
        return;
      default: {
        const unreachable: never = step;
        throw new Error(`unexpected step ${JSON.stringify(unreachable)}`);
      }
    }
  }
}
