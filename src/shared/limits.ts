/** Limits and cadences shared by the workflow, the activities and the tools. Units are in the names. */

/** Time a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 2_000;

/**
 * How far past a foreground run's deadline an attempt may still start its command (to end it at
 * once): the dispatch and the two clocks differ by milliseconds, and a run with a timeout of a few
 * milliseconds must time out as a command, not as one that never started.
 */
export const LATE_START_GRACE_MS = 1_000;

/**
 * How often a running command's activity heartbeats: liveness only. Output is read from the
 * command's host when someone asks (`readOutput`), kills and stdin go there by activities of their
 * own, and a closed run is found by the host's own check (CLOSED_RUN_CHECK_INTERVAL_MS): nothing
 * waits for a heartbeat's response. Every two minutes, not every one: each heartbeat is a write, and
 * so is each firing of the server's heartbeat-timeout timer (the history service re-arms it from
 * the last heartbeat: `executeActivityTimeoutTask` in temporal's
 * service/history/timer_queue_active_task_executor.go). A beat a minute with a 150 s timeout costs
 * 1 + 1/2 writes a minute; a beat every 2 minutes with a 5-minute timeout costs 1/2 + 1/4.
 */
export const HEARTBEAT_INTERVAL_MS = 120_000;

/**
 * Without a heartbeat for this long the server deems the command activity's worker gone: two and a
 * half intervals, so one late heartbeat is not a loss. A worker that died with its host is noticed
 * after this (then the lost window runs); a restarted worker fails its predecessor's attempts at
 * once, so a restart does not wait for it.
 */
export const HEARTBEAT_TIMEOUT_MS = 300_000;

/** The SDK's heartbeat throttle on a command worker: the activity paces its heartbeats itself. */
export const HEARTBEAT_THROTTLE_MS = 1_000;

/** How often a worker asks the server (one visibility query) which of the runs it runs commands for have closed. */
export const CLOSED_RUN_CHECK_INTERVAL_MS = 5_000;

/**
 * How long after a command attempt returned its end the host asks whether the server has it. The
 * SDK sends an attempt's result once, retrying for about 10 s (sdk-core's default `RetryOptions`,
 * `max_elapsed_time`): a worker cut off from the server, or a server restarting, for longer than
 * that loses the end, and the attempt would stay started on the server until its heartbeat
 * timeout, minutes later. Past that window, with room for the workflow to record the end.
 */
export const END_REPORT_GRACE_MS = 15_000;

/**
 * The most bytes of returned ends (their outcomes, about the size of their payloads) a host keeps
 * until the server is seen holding them; past it the oldest are dropped, and an end lost among
 * those waits for the heartbeat timeout, as before the host kept any.
 */
export const REPORTED_ENDS_MAX_BYTES = 64 * 1024 * 1024;

/** Most runs one closed-run query names (`RunId IN (...)`, about 40 KB at 1,000): one query a check for a host of a thousand tasks. */
export const CLOSED_RUN_QUERY_BATCH = 1_000;

/** How many tasks a worker's start scan checks with the server at once: a thousand at once is a storm. */
export const START_SCAN_CONCURRENCY = 16;

/** Reads, stops, stdin writes and releases one worker runs at once, on its host's control queue. */
export const CONTROL_ACTIVITY_SLOTS = 200;

/** How long a read waits for a worker on the task's host to take it before it answers with what the server holds. */
export const HOST_READ_START_MS = 2_000;

/** How often a waiting read on the host looks at the spill files' sizes (a file watch usually wakes it sooner). */
export const HOST_READ_POLL_MS = 50;

/**
 * Bytes of each stream's tail carried in a heartbeat: what readers see while the task's host does
 * not answer, and what a lost task ends with.
 */
export const HEARTBEAT_TAIL_BYTES = 16 * 1024;

/** Default bytes of each stream kept in a result; the rest is only in the spill file. */
export const DEFAULT_OUTPUT_LIMIT_BYTES = 30 * 1024;

/** Default foreground timeout when the call gives none. */
export const DEFAULT_TIMEOUT_MS = 2 * 60_000;

/** Default cap on a foreground timeout. */
export const DEFAULT_MAX_TIMEOUT_MS = 10 * 60_000;

/** Time one attempt to inject a completion notice may take before it is retried. */
export const NOTICE_INJECT_TIMEOUT_MS = 30_000;

/** Wait before the first retry of a completion notice whose inject failed. */
export const NOTICE_RETRY_INITIAL_INTERVAL_MS = 1_000;

/** Longest wait between retries of a completion notice. */
export const NOTICE_RETRY_MAX_INTERVAL_MS = 60_000;

/**
 * Characters of a task's last output a completion notice carries: often enough for the model to
 * act without a read (a test summary, an error), little enough for every notice of a busy session.
 */
export const NOTICE_TAIL_CHARS = 2_000;

/** Default time a completion notice waits for the owning agent host's worker before it is dropped. */
export const DEFAULT_NOTICE_WINDOW_MS = 60 * 60_000;

/**
 * Reads one run of a task's output reader takes before it continues as new. A read from the host
 * costs about fourteen history events (measured: 300 reads made 4,114; two workflow tasks' six, the
 * update's two, the read activity's three, the memo), so a run stays under Temporal's 4,096
 * suggested events and far under its 2,000 updates; the history's size (each read's bytes are in
 * it twice) also asks for a new run.
 */
export const READER_CLAIMS_PER_RUN = 250;

/**
 * Time without reads after which the output reader of a task that has ended ends; the next read
 * starts a new one from its memo. While its task runs, a reader never ends.
 */
export const READER_IDLE_MS = 30 * 60_000;

/** How long a workflow task waits on a worker's sticky queue before another worker may take it. */
export const STICKY_QUEUE_TIMEOUT_MS = 1_000;

/** Default time a spill file is kept after its last write, once no running command writes it. */
export const DEFAULT_SPILL_RETENTION_MS = 7 * 24 * 60 * 60_000;

/**
 * How often a worker looks for spill files past their retention or over its quota (when a command
 * starts). A sweep reads the directory and stats each file: milliseconds for thousands of tasks.
 */
export const SPILL_SWEEP_INTERVAL_MS = 60_000;

/**
 * How often the reader of a running task signals the task, to learn of an end it was not told of
 * (a signal to a closed run fails). Each probe adds one event to the task's history.
 */
export const READER_PROBE_INTERVAL_MS = 6 * 60 * 60_000;

/**
 * Default time a task waits for a worker on its host before it ends lost. A worker restart or
 * redeploy is back within a minute or two; a rebooted host is recognised at once by its boot id, so
 * the window only has to cover a worker that is down, not a host that lost its commands.
 */
export const DEFAULT_LOST_AFTER_MS = 10 * 60_000;

/**
 * How many times a task started with `on_host_loss: "restart"` runs its command again after its
 * host was lost: a command that brings down every host it runs on stops at this.
 */
export const MAX_HOST_RESTARTS = 3;

/**
 * How often a worker scans its host's supervisors for commands no attempt here follows: a task that
 * closed while the worker was away, an attempt lost on its way to this worker. At most a fifth of
 * the heartbeat timeout, so a lost attempt is found well before that timeout ends it.
 */
export const ORPHAN_SCAN_INTERVAL_MS = 60_000;

/**
 * How long the server may say an attempt of a command on this host started before the scan takes
 * one that never reached this worker as lost (and fails it, so its retry re-attaches): the server
 * hands a task to a poll whose answer can still go missing, and then only the heartbeat timeout
 * would end it. At most a tenth of the heartbeat timeout. Taking a slow attempt for a lost one costs
 * one more attempt, never the command.
 */
export const LOST_ATTEMPT_GRACE_MS = 10_000;

/**
 * How often an activity re-attached to a supervisor an earlier worker started checks for the
 * command's end and that the supervisor is alive (a supervisor this worker started announces its
 * end by exiting), while few are: see SUPERVISOR_CHECKS_PER_SECOND.
 */
export const SUPERVISOR_CHECK_INTERVAL_MS = 1_000;

/**
 * At most this many such checks a second for the whole worker (an end file read and a /proc read
 * each): a worker restarted under 1,000 tasks checks each every 5 s instead of every second, so
 * what its idle tasks cost it stays flat in their number (one check a second each was about a
 * tenth of a core at 1,000).
 */
export const SUPERVISOR_CHECKS_PER_SECOND = 200;

/** First wait before a command attempt is retried on its host (after a worker died or restarted). */
export const COMMAND_RETRY_INITIAL_INTERVAL_MS = 200;

/** Longest wait between attempts of a command on its host. */
export const COMMAND_RETRY_MAX_INTERVAL_MS = 10_000;

/** Time a stop of a command whose worker was down may take: the kill's grace plus its settling. */
export const STOP_COMMAND_TIMEOUT_MS = 30_000;

/**
 * How long a command's first attempt waits on the workflow's queue for a worker (it is normally
 * handed out with the workflow task at once) before the host queue's attempts take over.
 */
export const EAGER_ATTEMPT_SCHEDULE_TO_START_MS = 5_000;

/**
 * Default bytes of each of a task's stdout and stderr kept in its spill file. A model reads tails;
 * a stream past 1 GiB is a flood, and the cap keeps one from filling the host's disk.
 */
export const DEFAULT_MAX_OUTPUT_BYTES_PER_STREAM = 1024 * 1024 * 1024;

/**
 * Default processes and threads one task may have at once (cgroup pids.max). A parallel build runs
 * a few hundred; a fork bomb stops here instead of at the host's limit.
 */
export const DEFAULT_MAX_PROCESSES = 4096;

/** Default bytes of spill files a worker host keeps; the oldest ended tasks' files go first. */
export const DEFAULT_SPILL_QUOTA_BYTES = 20 * 1024 * 1024 * 1024;

/** Default cap on how long one `bash_output` call with `wait_ms` waits for new output (`createBashTools`). */
export const DEFAULT_MAX_WAIT_MS = 2 * 60_000;

/**
 * How often a waiting `bash_output` asks the server for the task's state while it cannot read from
 * the task's host (the host's worker is down, or the task has not reached a host yet).
 */
export const WAIT_POLL_INTERVAL_MS = 100;

/** Longest `bash_output` filter accepted, in UTF-8 bytes: a regular expression, not a payload. */
export const MAX_FILTER_BYTES = 1024;

/** Most tasks one `bash_list` call shows (the most recent first after the running ones). */
export const LIST_LIMIT = 100;

/**
 * Most of a session's tasks one `bash_list` call looks through for its background ones: foreground
 * runs are tasks too, and a session that ran many of them must not hide its background tasks.
 */
export const LIST_SCAN_LIMIT = 1_000;

/** Default cap on the background tasks one agent session may run at once (`createBashTools`). */
export const DEFAULT_MAX_BACKGROUND_TASKS_PER_SESSION = 20;

/**
 * How long a session's cap (the background quota, pending approval requests) counts a workflow this
 * process started by asking for it directly rather than trusting visibility, which may lag a start
 * by a moment on a real cluster.
 */
export const QUOTA_RECENT_START_MS = 30_000;

/**
 * Longest command the `bash` tool accepts, in UTF-8 bytes. The command reaches `bash -c` as one exec
 * argument, and Linux caps one argument at MAX_ARG_STRLEN (32 pages: 128 KiB with its terminating
 * NUL); a longer one fails to spawn with E2BIG. It travels in four copies (the workflow's input,
 * memo and details, the activity's input), which stay far under Temporal's 2 MB payload limit.
 */
export const MAX_COMMAND_BYTES = 128 * 1024 - 1;

/**
 * Longest description the `bash` tool accepts, in UTF-8 bytes: it is a one-line summary, shown in the
 * Temporal Web UI and kept in the task's memo, never a second channel for data.
 */
export const MAX_DESCRIPTION_BYTES = 4 * 1024;

/** Longest workdir the `bash` tool accepts, in UTF-8 bytes: Linux's PATH_MAX (4096) with its NUL. */
export const MAX_WORKDIR_BYTES = 4096 - 1;

/** Bytes one `bash_input` call may write: what the stdin FIFO holds, so a reading command takes it at once. */
export const MAX_INPUT_BYTES = 64 * 1024;

/** How long a write to a task's stdin waits for a worker on the task's host to take it; past this it is refused unwritten. */
export const STDIN_HOST_WAIT_MS = 5_000;

/** How long the write itself may take on the host: waiting for room in a full stdin, and closing it. */
export const STDIN_WRITE_MS = 5_000;

/** A task takes stdin writes while its history is below both of these (Temporal's limits are 51,200 events and 50 MB). */
export const STDIN_HISTORY_MAX_EVENTS = 20_000;
/** Its size counterpart: well under the 50 MB limit and the 10 MB warning, so a task keeps room to end. */
export const STDIN_HISTORY_MAX_BYTES = 20 * 1024 * 1024;

/**
 * Workflows a command worker keeps cached. Without a bound the SDK sizes its cache by the heap
 * (about 2,300 on a 4 GiB heap), and every open run and output reader (open 30 minutes after its
 * task ends) stays in it at some 280 KiB: a 10-minute soak of start / read / kill cycles grew the
 * worker from 370 to 800 MiB and on. Beyond this many, a workflow is replayed at its next task.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 500;

/** How long a `bash_output` filter may run over one read before it is given up (see tools/line-filter.ts). */
export const FILTER_TIME_LIMIT_MS = 1_000;

/** AES-256: every key is 32 bytes. */
export const CODEC_KEY_BYTES = 32;

/** How long a connection attempt or a start request may wait for the server. */
export const CONNECT_TIMEOUT_MS = 5_000;

/**
 * How long a foreground `bash` call runs before it becomes a background task: below the 60 s
 * request timeout of common MCP clients, with room for the round trips around it.
 */
export const DEFAULT_MCP_AUTO_BACKGROUND_AFTER_MS = 45_000;

/** The longest `bash_output` wait_ms an MCP call may take, for the same reason. */
export const MCP_MAX_WAIT_MS = 45_000;

/**
 * How many MCP sessions one `mcp --http` server holds at once. A server acts as one agent session,
 * whose clients are a few (an editor, an inspector, their reconnects); 32 leaves room for clients
 * that restart without ending their session until those expire, and bounds what a leak can hold.
 */
export const DEFAULT_MCP_HTTP_MAX_SESSIONS = 32;

/**
 * How long an MCP session over HTTP lives with no request open and none made: a client that went
 * away without ending its session (DELETE) frees its place after this. A client listening on its
 * event stream (GET) is never idle, so it is not cut off while it waits for notices.
 */
export const DEFAULT_MCP_HTTP_SESSION_IDLE_MS = 30 * 60_000;

/**
 * How often a client is asked to poll `tasks/get`. Each poll is one describe of the task's workflow
 * (and, once it has ended, one read of its result); `tasks/result` waits on the workflow, not by polling.
 */
export const MCP_TASK_POLL_INTERVAL_MS = 2_000;

/**
 * Bytes one workspace operation carries (a piece of a file read or written, of an archive, of a
 * task's spill file): its data crosses Temporal as one payload, twice (workflow input and activity
 * input, or activity result and workflow result). The server refuses a payload over 2 MiB, but it
 * and the SDK's Core log a warning (TMPRL1103) for each over 512 KiB: 448 KiB stays under that with
 * room for the envelope. Larger files and archives go in pieces of this size, one operation each.
 */
export const WORKSPACE_TRANSFER_MAX_BYTES = 448 * 1024;

/**
 * The largest file a workspace read or write moves whole: the caller holds it in memory (the SDKs'
 * `readFile` answers one buffer); at 448 KiB an operation, it is about 590 operations.
 */
export const WORKSPACE_FILE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The largest workspace archive (persist and hydrate): the SDK's format is one JSON text with the
 * files in base64, built whole in memory on the host and read whole on the client, and V8 holds no
 * string over 512 Mi characters; 256 MiB of archive stays well inside that with its base64 copy.
 */
export const WORKSPACE_ARCHIVE_MAX_BYTES = 256 * 1024 * 1024;

/** How long a staged archive piece stays on its host after its last write, for a caller that died midway. */
export const WORKSPACE_STAGED_KEEP_MS = 60 * 60_000;

/**
 * How long a workspace operation may take from its scheduling to its end on the workspace's host
 * (no retry after): a dead host answers WorkspaceOperationError after this, never a hang.
 */
export const WORKSPACE_OP_TIMEOUT_MS = 30_000;

/** The longest a reminder may wait: 30 days, well inside any namespace's history limits (one timer). */
export const MAX_REMINDER_AFTER_MS = 30 * 24 * 60 * 60_000;

/** The most bytes of UTF-8 a reminder's note may hold: a line or two for the model to read back. */
export const MAX_REMINDER_NOTE_BYTES = 1024;

/** The most tasks one reminder may wait for. */
export const MAX_REMINDER_TASKS = 20;

/** The most reminders one session may have pending at once. */
export const MAX_REMINDERS_PER_SESSION = 20;

/**
 * How long a monitor gathers matching lines after the first before it sends them as one notice:
 * lines a burst prints together (a stack trace, a test summary) arrive as one notice, and the wait
 * adds at most this much to the first line's way to the model.
 */
export const MONITOR_GATHER_MS = 1_000;

/** The most matching lines one monitor notice shows; the rest it counts, for `bash_output` to show. */
export const MONITOR_NOTICE_LINES = 20;

/** The most characters of one matching line a monitor notice shows; a longer line ends with `…`. */
export const MONITOR_LINE_CHARS = 500;

/** The longest `notify_on` pattern, in characters: a pattern is a line or two, not a program. */
export const MAX_MONITOR_PATTERN_CHARS = 256;

/**
 * The most bytes of one line a monitor matches against: the rest of a longer line is skipped. With
 * a linear-time engine (RE2), this bounds the work one line can cost the host.
 */
export const MONITOR_LINE_SCAN_BYTES = 8 * 1024;

/**
 * A monitor that matches more lines than this within MONITOR_FLOOD_WINDOW_MS pauses itself: past
 * that, notices would bury the session and cost the server an action each for little news.
 */
export const MONITOR_FLOOD_LINES = 200;

/** The window MONITOR_FLOOD_LINES counts in: a minute. */
export const MONITOR_FLOOD_WINDOW_MS = 60_000;

/** Default time an approval request waits for a decision before it is denied with a notice. */
export const DEFAULT_APPROVAL_EXPIRY_MS = 24 * 60 * 60_000;

/**
 * The most approval requests one session may have waiting for a decision at once, as many as it may
 * have reminders: each is a workflow and a row in every approver's list, and a model that asks more
 * is flooding the people who decide, not waiting for them.
 */
export const MAX_PENDING_APPROVALS_PER_SESSION = 20;

/** The most approval requests `durable-bash approvals` lists. */
export const MAX_LISTED_APPROVALS = 200;

/** A Claude Code Bash call's foreground timeout when it gives none: Claude Code's own default, as its Bash schema says. */
export const CLAUDE_CODE_DEFAULT_TIMEOUT_MS = 120_000;

/** The most a Claude Code Bash call's foreground `timeout` may be: Claude Code's own cap, as its Bash schema says. */
export const CLAUDE_CODE_MAX_TIMEOUT_MS = 600_000;

/**
 * The most a Claude Code Bash call's background `timeout` may be: Claude Code's own cap (2 hours),
 * so a call its schema allows is taken; with no `timeout` a background task runs until it ends.
 */
export const CLAUDE_CODE_MAX_BACKGROUND_TIMEOUT_MS = 7_200_000;

/**
 * How long after a connection's first `tools/list` its notices start to go out as channel messages,
 * unless a `tools/call` comes first. Claude Code 2.1.328 registers its channel handler as a turn
 * starts, for the servers connected then (and at once after a reconnect), and drops, without a word,
 * a message that comes before. A server it waits for before the first turn (`alwaysLoad`) is listed,
 * then registered as that turn starts: 10 to 150 ms later, measured unloaded. A `tools/call` comes
 * in a turn, after its start.
 */
export const CHANNEL_SETTLE_MS = 3_000;

/**
 * How soon after this process started Claude Code's first connection must have initialized for the
 * channel to be trusted. Claude Code 2.1.328 registers channels when a turn starts, for the servers
 * connected then; before its first turn it waits for an `alwaysLoad` server 5 s from when it began
 * to connect (just before this process started), then goes on without it ("alwaysLoad servers: 1/1
 * not ready after 5000ms — proceeding"), and a server that connects after that turn started is not
 * registered until a later one. Measured: a server that answered after 12 s got no channel.
 */
export const CHANNEL_CONNECT_DEADLINE_MS = 5_000;
