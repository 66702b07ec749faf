/** A terminal task's size and screen, as the host renders it and the tools present it. */

/** A terminal's size in character cells. */
export interface TerminalSize {
  cols: number;
  rows: number;
}

/** From byte `offset` of the log on, the terminal had this size. */
export interface TerminalSizeAt extends TerminalSize {
  offset: number;
}

/** What a terminal shows. Rows and columns count from 1, as a person counts them. */
export interface TerminalScreen {
  cols: number;
  rows: number;
  /** The visible rows, as the emulator holds them, each right-trimmed. */
  lines: string[];
  cursor: { row: number; column: number };
  /** Full-screen programs set it (DECCKM): the cursor keys then send SS3 sequences. */
  applicationCursor: boolean;
}
