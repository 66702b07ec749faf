/**
 * The bash grammar: tree-sitter-bash on web-tree-sitter, as Gemini CLI and Codex read commands.
 * The WebAssembly build, not the native one: nothing to compile on install, the same parser on
 * every platform. It loads once (about 40 ms); after that a parse is synchronous.
 */
import { createRequire } from 'node:module';
import { Language, Parser, type Tree } from 'web-tree-sitter';

/**
 * How often the parser may report its progress per character before the parse counts as too
 * complex (the parser reports about once every 20 to 40 characters of ordinary input; a
 * pathological ambiguity reports far more often). A count, not a clock, so a verdict never
 * depends on how busy the machine is.
 */
const PROGRESS_REPORTS_PER_CHAR = 0.5;
const PROGRESS_REPORTS_FREE = 1_000;

export interface BashGrammar {
  /** The tree of `source`, or undefined when it is too complex to parse; the caller deletes it. */
  parse(source: string): Tree | undefined;
}

let loading: Promise<BashGrammar> | undefined;

/** The grammar, loaded on first use. */
export function loadBashGrammar(): Promise<BashGrammar> {
  loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

async function load(): Promise<BashGrammar> {
  await Parser.init();
  const wasm = createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm');
  const language = await Language.load(wasm);
  const parser = new Parser();
  parser.setLanguage(language);
  return {
    parse(source) {
      let reports = 0;
      const limit = PROGRESS_REPORTS_FREE + PROGRESS_REPORTS_PER_CHAR * source.length;
      // The callback's declared type returns void; returning true cancels the parse (see its doc).
      const progressCallback = (() => ++reports > limit) as () => void;
      return parser.parse(source, null, { progressCallback }) ?? undefined;
    },
  };
}
