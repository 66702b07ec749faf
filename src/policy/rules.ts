/**
 * Rule-based command checks: every simple command of a command line (see `splitCommands`), and
 * every command it runs through a wrapper, is held against the rules; the strictest action wins.
 * A convenience for agent hosts, not a security boundary: text rules cannot see what a program
 * does (an interpreter, a copied binary, a script written a moment ago).
 */

import { oneLine } from '../shared/checks.js';
import type { CommandMatch, CommandRule, DenyRule, PermissionPolicy } from './policy-types.js';
import { RuleAction } from './policy-types.js';
import { basename } from './shell-words.js';
import { splitCommands } from './split-commands.js';

export interface RulePolicyOptions {
  rules: readonly CommandRule[];
  /**
   * The action for a command no rule matches.
   * @default 'ask'
   */
  defaultAction?: RuleAction;
  /**
   * The action for a command line the splitter cannot read with certainty (a command name computed
   * at run time, an unbalanced quote, an unterminated here-document, `eval "$x"`), unless the
   * default action is stricter. It is never allowed.
   * @default 'ask'
   */
  whenUncertain?: 'ask' | 'deny';
}

/** A rule set ready to check commands. */
export interface CompiledRules {
  rules: readonly CompiledRule[];
  defaultAction: RuleAction;
  whenUncertain: 'ask' | 'deny';
}

interface CompiledRule {
  action: RuleAction;
  /** How the rule reads in a reason: a prefix in backquotes, a pattern as `/source/flags`. */
  label: string;
  reason: string | undefined;
  /** Whether a simple command's words match. */
  matches(words: readonly string[], text: string): boolean;
  /** For a pattern: whether the whole command line matches. */
  matchesLine?(line: string): boolean;
}

/** The verdict on one command line, with the reason for the strictest part. */
export interface RuleVerdict {
  action: RuleAction;
  reason: string;
}

const STRICTNESS: Record<RuleAction, number> = { allow: 0, ask: 1, deny: 2 };

/** Longest command text quoted in a reason. */
const REASON_COMMAND_CHARS = 120;

/** A policy that checks each call's command against rules; see `RulePolicyOptions`. */
export function createRulePolicy(options: RulePolicyOptions): PermissionPolicy {
  const compiled = compileRules(options);
  return async (request) => {
    const verdict = await checkCommand(request.command, compiled);
    switch (verdict.action) {
      case 'allow':
        return { action: 'allow' };
      case 'ask':
        return { action: 'ask', reason: verdict.reason };
      case 'deny':
        return { action: 'deny', reason: verdict.reason };
      default: {
        const unreachable: never = verdict.action;
        return unreachable;
      }
    }
  };
}

/** Validates and compiles rules; throws a `TypeError` naming the first bad rule. */
export function compileRules(options: RulePolicyOptions): CompiledRules {
  const defaultAction = options.defaultAction ?? RuleAction.ask;
  const whenUncertain = options.whenUncertain ?? RuleAction.ask;
  if (!isAction(defaultAction))
    throw new TypeError(`invalid defaultAction: expected allow, ask or deny, got ${defaultAction}`);
  if (whenUncertain !== 'ask' && whenUncertain !== 'deny') {
    throw new TypeError(`invalid whenUncertain: expected ask or deny, got ${whenUncertain}`);
  }
  return { rules: options.rules.map(compileRule), defaultAction, whenUncertain };
}

/**
 * A worker's deny rules as a rule set: anything they do not match is allowed, and a command line
 * that cannot be read with certainty is denied (it could hide a denied command).
 */
export function compileDenyRules(rules: readonly DenyRule[]): CompiledRules {
  return compileRules({
    rules: rules.map((rule) => ({ ...rule, action: RuleAction.deny }) as CommandRule),
    defaultAction: RuleAction.allow,
    whenUncertain: RuleAction.deny,
  });
}

/**
 * A deny rule from a command-line flag: `/regex/flags` is a pattern, anything else a prefix. A path
 * such as `/bin/rm` or `/usr/sbin/reboot` is a prefix: its flags are no regex flags, or its body
 * holds a `/` a regex literal would escape.
 */
export function denyRuleFromFlag(value: string): DenyRule {
  return ruleFromFlag(value, 'deny');
}

/** A rule's match from a command-line flag (`--allow`, `--ask`, `--deny`), read as `denyRuleFromFlag` reads it. */
export function ruleFromFlag(value: string, kind = 'permission'): CommandMatch {
  const regex = /^\/((?:[^/\\]|\\.)+)\/([dgimsuvy]*)$/s.exec(value);
  if (regex) return { pattern: new RegExp(regex[1] as string, regex[2]) };
  if (value.trim() === '')
    throw new TypeError(`invalid ${kind} rule: expected a command prefix or /regex/, got an empty string`);
  return { prefix: value };
}

/**
 * Checks a command line against compiled rules. The strictest action wins: a rule's, the default
 * action's for a command no rule covers, or `whenUncertain`'s for a line the splitter cannot read
 * with certainty. The reason names every rule of that action that matched, in the order of the
 * line (one part each, joined by `; `: a rule's own reason, or `` `COMMAND` matches the ACTION rule
 * LABEL ``); with none, it says why the line is uncertain, or which command no rule covers.
 */
export async function checkCommand(line: string, rules: CompiledRules): Promise<RuleVerdict> {
  const split = await splitCommands(line);
  /** Each rule that matched, with the first command it matched (undefined: only the whole line). */
  const matched = new Map<CompiledRule, string | undefined>();
  let uncovered: string | undefined;
  let action: RuleAction = RuleAction.allow;
  const stricter = (candidate: RuleAction) => {
    if (STRICTNESS[candidate] > STRICTNESS[action]) action = candidate;
  };
  for (const command of split.commands) {
    for (const words of command.layers) {
      const text = words.join(' ');
      const layerMatches = rules.rules.filter((rule) => rule.matches(words, text));
      for (const rule of layerMatches) if (!matched.has(rule)) matched.set(rule, text);
      if (layerMatches.length === 0) {
        uncovered ??= text;
        stricter(rules.defaultAction);
      } else {
        for (const rule of layerMatches) stricter(rule.action);
      }
    }
  }
  for (const rule of rules.rules) {
    if (rule.action !== RuleAction.allow && rule.matchesLine?.(line)) {
      if (!matched.has(rule)) matched.set(rule, undefined);
      stricter(rule.action);
    }
  }
  const [uncertain] = split.uncertain;
  const uncertainAction =
    STRICTNESS[rules.defaultAction] > STRICTNESS[rules.whenUncertain]
      ? rules.defaultAction
      : rules.whenUncertain;
  if (uncertain !== undefined) stricter(uncertainAction);
  if (action === RuleAction.allow) return { action, reason: 'no rule refuses it' };
  const parts = [...matched]
    .filter(([rule]) => rule.action === action)
    .map(([rule, text]) => {
      const subject = text === undefined ? 'the command' : `\`${quoted(text)}\``;
      return rule.reason ?? `${subject} matches the ${rule.action} rule ${rule.label}`;
    });
  if (parts.length > 0) return { action, reason: [...new Set(parts)].join('; ') };
  if (uncertain !== undefined && uncertainAction === action)
    return { action, reason: `cannot check the command with certainty: ${oneLine(uncertain)}` };
  return { action, reason: `\`${quoted(uncovered ?? line)}\` is not covered by any rule` };
}

function compileRule(rule: CommandRule, index: number): CompiledRule {
  const where = `rule ${index + 1}`;
  if (!isAction(rule.action))
    throw new TypeError(`invalid ${where}: expected an action allow, ask or deny, got ${rule.action}`);
  const reason = rule.reason === undefined ? undefined : oneLine(rule.reason);
  const match: CommandMatch = rule;
  if (typeof match.prefix === 'string' && match.pattern === undefined) {
    const prefix = match.prefix.trim().split(/\s+/);
    if (prefix[0] === '')
      throw new TypeError(`invalid ${where}: expected a prefix with a word, got an empty string`);
    const [name, ...rest] = prefix as [string, ...string[]];
    const byBasename = !name.includes('/');
    return {
      action: rule.action,
      label: `\`${prefix.join(' ')}\``,
      reason,
      matches: (words) =>
        words.length >= prefix.length &&
        (words[0] === name || (byBasename && basename(words[0] as string) === name)) &&
        rest.every((word, i) => words[i + 1] === word),
    };
  }
  if (match.prefix === undefined && (typeof match.pattern === 'string' || match.pattern instanceof RegExp)) {
    let regex: RegExp;
    try {
      // Without `g` or `y`, `test` keeps no state between calls.
      regex =
        typeof match.pattern === 'string'
          ? new RegExp(match.pattern)
          : new RegExp(match.pattern.source, match.pattern.flags.replace(/[gy]/g, ''));
    } catch (err) {
      throw new TypeError(`invalid ${where}: ${(err as Error).message}`);
    }
    return {
      action: rule.action,
      label: String(regex),
      reason,
      matches: (_words, text) => regex.test(text),
      matchesLine: (line) => regex.test(line),
    };
  }
  throw new TypeError(
    `invalid ${where}: expected exactly one of prefix (a string) or pattern (a RegExp or string)`,
  );
}

function isAction(value: unknown): value is RuleAction {
  return value === 'allow' || value === 'ask' || value === 'deny';
}

function quoted(text: string): string {
  const line = oneLine(text);
  return line.length > REASON_COMMAND_CHARS ? `${line.slice(0, REASON_COMMAND_CHARS - 1)}…` : line;
}

/** Rules given as text, by action (a command-line flag's or a config file's): a prefix or `/regex/` each. */
export interface TextRules {
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /** For a command no rule matches. @default 'allow' */
  defaultAction?: RuleAction;
}

/**
 * The rule policy text rules ask for, read as `ruleFromFlag` reads each (`durable-bash mcp`'s
 * flags, the harness plugin's config); undefined when they give no rule and allow by default.
 */
export function textRulePolicy(text: TextRules): PermissionPolicy | undefined {
  const defaultAction = text.defaultAction ?? RuleAction.allow;
  const rules: CommandRule[] = ([RuleAction.allow, RuleAction.ask, RuleAction.deny] as const).flatMap(
    (action) =>
      (text[action] ?? []).map((value) => ({ ...ruleFromFlag(value, action), action }) as CommandRule),
  );
  if (rules.length === 0 && defaultAction === RuleAction.allow) return undefined;
  return createRulePolicy({ rules, defaultAction });
}
