/** What the model reads about each tool. Kept together so they read as one voice. */

export const bashDescription = `Run a shell command with bash -c and return its output.

Each call runs in a fresh shell: no state (cd, variables, functions) carries over between calls. Use the workdir argument instead of cd.

The result is stdout, then a [stderr] section when the command wrote to stderr, or (no output) when it wrote nothing, followed by status lines: [timed out after Nms] when the timeout fired, [killed by signal: SIG] for a signal death, [exit code: N] for a non-zero exit. A non-zero exit is a normal result for you to act on. When a stream is longer than the result can hold, its end is kept and [output truncated; full output: <path>] names a file with all of it.

Foreground runs have a timeout (timeoutMs, capped by the worker). For builds, test suites, servers and anything long, set run_in_background: true: the call returns a task id at once and the command runs without a timeout. You will get a notice in your context when it finishes, but you are not woken up for it: check on it with bash_output, and list your tasks with bash_list. A background command's stdin is empty unless you set keep_stdin_open: true; then write to it with bash_input.

For a program that wants a terminal (a full-screen program like vim or top, an installer's prompts, a REPL with line editing, Ctrl-C), set tty: true (cols and rows set its size, default 120x40): it runs on a terminal, its result and bash_output show the screen as text, then [screen: <cols>x<rows>, cursor at row <r>, column <c>], and bash_input types text and keys into it.`;

/** The `bash` description where it takes Claude Code's Bash arguments (claude-code-bash.ts): the same tool as Claude Code's Bash, made durable. */
export const claudeCodeBashDescription = `Run a shell command with bash -c and return its output: Claude Code's Bash, where every run is a durable task that outlives this process and its session. Calls of Bash come here too.

Each call runs in a fresh shell: no state (cd, variables, functions) carries over between calls.

The result is stdout, then a [stderr] section when the command wrote to stderr, or (no output) when it wrote nothing, followed by status lines: [timed out after Nms] when the timeout fired, [killed by signal: SIG] for a signal death, [exit code: N] for a non-zero exit. A non-zero exit is a normal result for you to act on.

timeout is in milliseconds: default 120000, max 600000 for a foreground command. With run_in_background: true the call answers started background task <id> at once, and the task keeps running across turns, restarts of this process and resumed conversations; timeout then limits how long it may run (max 7200000), and without one it runs until it ends. Read its output with bash_output, list your tasks with bash_list, stop one with bash_kill. dangerouslyDisableSandbox is not available: every command runs in its session's isolation.`;

/** Appended to the `bash` description when foreground calls move to the background after `afterMs`. */
export const autoBackgroundDescription = (afterMs: number) =>
  `\n\nA foreground call still running after ${afterMs}ms returns the output so far and [still running after ${afterMs}ms; moved to background task <id>. Read its output with bash_output.]: the command goes on as a background task, with no timeout, and you get a notice when it finishes. Read the rest of its output with bash_output (it starts after what the call showed).`;

export const bashKillDescription = `Kill a background task started with bash run_in_background: true.

The whole process group ends (children too): SIGTERM first, SIGKILL after a grace period. Killing a task that already finished changes nothing and says so.`;

export const bashOutputDescription = `Read the output of a background task started with bash run_in_background: true.

Returns the output produced since your previous bash_output call for this task (stdout, then a [stderr] section), or (no new output), followed by a status line: [status: running], [status: completed, exit code: N], [status: killed by SIG], or [status: failed: <reason>] / [status: lost: <reason>] when the command could not run or its worker was lost. When more was printed than could be held, [some output was dropped from memory; full output: <paths>] names files with all of it. Reads keep their place across restarts; after the task ends, one more read returns what is left. If a last line says the task worker is unavailable, the output shown will be shown again by the next read. A task run with tty: true answers with its screen instead, then [screen: ...] and the status line; set scrollback: true for the lines that scrolled off the screen since your last read.

Rather than calling again and again while a task runs, set wait_ms: a read with nothing new then waits up to that long (capped) for new output or the task's end, and answers as soon as either comes. To see only some lines (errors, a test summary), set filter to a regular expression: only whole lines that match are shown (and wait_ms waits for one that matches); the others are still read, a line says how many were left out, and the full output file keeps them all.`;

export const bashListDescription = `List your background tasks (started with bash run_in_background: true): one line each with its id, status, age and command, running tasks first. Only running tasks by default, and ended ones whose completion notice did not reach you (marked (notice not delivered)); set all: true to include every task that has ended. Says (no background tasks) when there are none.`;

export const bashInputDescription = `Write to the stdin of a background task started with bash run_in_background: true and keep_stdin_open: true (an interactive program, a REPL, a prompt waiting for an answer), or type into the terminal of a task started with tty: true.

The text goes in exactly as given: end each line with \\n, as a program reading lines needs it. Set close: true to close the stdin after the text (the program then reads end of file); text may then be empty. Answers how many bytes were written; when the program is not reading, only what fits goes in, and the answer says so. Read what the program answers with bash_output (wait_ms helps).

keys presses keys after the text, in tmux's names: Enter, Tab, Escape, BSpace, Up, Down, Left, Right, Home, End, PageUp, PageDown, F1-F12, C-c (Ctrl-C, which interrupts the program on a terminal), C-d, C-z, M-x. On a terminal, Enter ends a line; on a plain stdin end lines with \\n in text. cols with rows resizes a terminal.`;

export const bashRemindDescription = `Set a reminder instead of polling: after after_ms, you get the note back as a notice (reminder: <note>) with your next request, even if this host, the workers or the server restarted in between. Use it when you know when to look again (a deploy that takes 20 minutes, a job to check in an hour). bash_list shows your pending reminders; cancel one with { cancel: <id> }.`;

export const bashMonitorDescription = `Watch a running background task's output instead of polling it: each line that matches notify_on (a regular expression, RE2 syntax) comes to you as a notice with your next request: background bash task <id> printed N lines matching /<pattern>/:, then the lines. Lines that match close together come in one notice. Setting a pattern replaces the task's (bash's notify_on sets one at the start); null clears it. A monitor that matches too often pauses itself and says so; set it again to go on. The notice that the task finished still comes, after the lines it printed before. Silence is not success: a monitor tells you only of lines that match, so check on a task that has said nothing for long.`;
