/**
 * Every limit of the hub, defined once. Units are in the names. Section names refer to
 * the specification (protocol.md) that sets them.
 */

/** 来源: event field limits, in Unicode code points (`type` in characters, all ASCII). */
export const eventIdMaxCodepoints = 200;
export const eventSubjectMaxCodepoints = 100;
export const eventSummaryMaxCodepoints = 200;
export const eventDetailMaxCodepoints = 4000;
export const eventLinkMaxCodepoints = 500;
export const eventTypeMaxChars = 64;

/** 一致性和复现: card answer and channel report limits, in code points. */
export const answerTextMaxCodepoints = 4000;
export const answerByMaxCodepoints = 500;
export const answerRefMaxCodepoints = 500;
export const deliveryRefMaxCodepoints = 500;
export const deliveryErrorMaxCodepoints = 2000;

/** Receipt texts (our choice where the spec is silent; generous, finite). */
export const cardTitleMaxCodepoints = 200;
export const cardTextMaxCodepoints = 4000;
export const cardAboutMaxCodepoints = 4000;
export const cardKeyMaxCodepoints = 200;
export const cardOptionsMax = 10;
export const cardOptionMaxCodepoints = 200;
export const receiptItemsMax = 50;
export const runSummaryMaxCodepoints = 1000;
export const runErrorMaxCodepoints = 4000;
export const sessionMaxCodepoints = 500;
export const reasonMaxCodepoints = 1000;
/** Agent：领活: a worker's claim id, in code points like every other text limit (it was counted in UTF-16 units). */
export const claimIdMaxCodepoints = 100;
/** Agent：领活: run ids a worker may report in hand with one GET /v1/work (`running`). */
export const runningRunsMax = 1000;

/** HTTP: bodies above this are refused with 413 without being read whole. */
export const requestBodyMaxBytes = 1024 * 1024;

/** Agent: the longest a claim may be held open waiting for work or cards, in seconds. */
export const longPollMaxSeconds = 50;

/**
 * 失败时会怎样 (issue 27 #5): callers' inputs that may wait for the hub's next group commit at once. Beyond it a
 * request is answered 503 with `Retry-After: hubInputQueueRetryAfterSeconds` and changes nothing; the hub's own
 * inputs (rules, deadlines) are never refused. Commits take them 512 at a time, so this is some 20 commits of backlog.
 */
export const hubInputQueueMax = 10_000;
/** How long a caller refused for a full input queue is told to wait before it tries again (`Retry-After`), in seconds. */
export const hubInputQueueRetryAfterSeconds = 1;

/** Agent: heartbeats are written to the log at most this often per worker (and per channel). */
export const heartbeatRecordIntervalMs = 60_000;

/** 失败时会怎样: retry after 5 min, doubling, at most 1 h; card at the 3rd; cancel at the 10th. */
export const retryDelayFirstMs = 5 * 60_000;
export const retryDelayMaxMs = 60 * 60_000;
export const failuresBeforeCard = 3;
export const failuresBeforeCancel = 10;

/**
 * 失败时会怎样: a deadline whose handler fails (a broken invariant) is tried again after 5 s, doubling, at most every
 * hour, for as long as it fails; at the 3rd failure in a row the owner gets a card naming it.
 */
export const deadlineRetryFirstMs = 5_000;
export const deadlineRetryMaxMs = 60 * 60_000;
export const deadlineFailuresBeforeCard = 3;
/** The error of a failed deadline as recorded and shown on its card, in code points. */
export const deadlineErrorMaxCodepoints = 1000;

/** 失败时会怎样: a run unreported for 5 min is uncertain; a worker unseen for 10 min is offline. */
export const runLeaseMs = 5 * 60_000;
export const workerOfflineMs = 10 * 60_000;
/** A worker counts as online for 3 min after its last recorded heartbeat. */
export const workerOnlineMs = 3 * 60_000;

/** 通道: an offered card not reported is offered again after 1 min. */
export const cardOfferLeaseMs = 60_000;
/** 通道: a failed first delivery is retried with growing gaps and given up after 1 h. */
export const deliveryRetryFirstMs = 30_000;
export const deliveryRetryMaxMs = 15 * 60_000;
export const deliveryGiveUpMs = 60 * 60_000;
/** notice.fyi: delivered at most this long after creation. */
export const fyiDeliveryWindowMs = 24 * 60 * 60_000;
/** Card link pages are valid this long from the card's creation. */
export const cardLinkValidMs = 7 * 24 * 60 * 60_000;

/**
 * A `later` timer set by a run that a timer woke comes due at least this long after it is set (issue 26 round 27,
 * F27a-1: a run renewing its own timer one second ahead started 50 runs in 54 s at hops 0, which neither the hop limit —
 * timers keep their depth, protocol.md — nor `startsPerMinute` — timers are not counted — stopped). A self-renewing
 * timer then runs a lane at most once a minute per key; a timer set by any other run keeps its time.
 */
export const laterRenewMinMs = 60_000;

/** 一致性和复现: receipt events deeper than this are recorded but not dispatched. */
export const hopsMax = 8;
/**
 * Runs the events of one rule may start within `ruleStartsWindowMs` (from the first of them); one more pauses the rule
 * and asks the owner (issue 26: a workflow that posted its own event ran 100 times in 15 s). A backstop for loops that
 * carry no hops (those that do stop at `hopsMax`): high enough for a burst of many subjects' events to a `parallel`
 * rule (70 tickets at once queue 70 runs), whose events a pause would leave untaken. See src/kernel/rate.ts.
 */
export const ruleStartsPerWindowMax = 100;
/** The window of `ruleStartsPerWindowMax`: one minute (ms). */
export const ruleStartsWindowMs = 60_000;
/**
 * The most a rule's own `startsPerMinute` may raise its start limit to (runs per `ruleStartsWindowMs`): high-volume
 * rules and the benchmark's post thousands of events a minute on purpose; a limit beyond this catches no loop.
 */
export const ruleStartsPerMinuteFieldMax = 100_000;

/** 定时错过了: cron times skipped by one late wake-up or one pause are counted up to this many (each costs ~60 µs). */
export const cronSkippedCountMax = 1000;

/**
 * Issue 30: a JSON answer at least this long (UTF-16 units, about bytes) goes gzip'd to a client that takes gzip;
 * below it the header costs more than the bytes saved.
 */
export const answerGzipMinBytes = 1024;
/** 本人: runs per page of GET /v1/state. */
export const stateRunsPerPage = 60;
/** 本人: runs a page of GET /v1/state with `rule`, `state` or `worker` looks through at most (matching or not). */
export const stateRunsScanRows = 2000;
/** 本人: the longest `rule` or `worker` of GET /v1/state's query. */
export const stateFilterMaxCodepoints = 200;
/** 本人: recently closed cards listed in GET /v1/state. */
export const stateRecentCards = 20;
/**
 * The most open cards of its group a job's context lists (`context.open`), the newest ones: every run of a group with
 * many open cards carried them all (issue 30's fixture: 1,000 cards, 110 KB of each 112 KB job row, 3.2 GB in all).
 */
export const contextOpenCardsMax = 100;
/** 本人: unrouted and paused-skipped events listed in GET /v1/state. */
export const stateRecentEvents = 20;
/** 本人 (issue 30): events per page of GET /v1/events. */
export const eventsPerPage = 50;
/** 本人 (issue 30): runs GET /v1/events lists with each event (the newest; the event's page says how many there are). */
export const eventRunsListed = 10;
/** 本人 (issue 30): events, runs and cards GET /v1/search answers at most, each. */
export const searchHitsMax = 50;
/** 本人 (issue 30): the longest text GET /v1/search and GET /v1/events look for. */
export const searchQueryMaxCodepoints = 200;
/** 本人 (issue 30): rows of each kind GET /v1/search looks through without a text (newest first; with one, the index). */
export const searchScanRows = 5000;
/** 本人 (issue 30): characters of one event's, run's or card's text the search index keeps (the rest is not found). */
export const searchTextMaxChars = 4000;
/**
 * 本人 (issue 32): facts the search index may lag behind the log. The index is brought up in one transaction for all
 * of them (one FTS5 segment for their rows, where one per commit doubled an event's cost), when a commit reaches this
 * lag, and before every read of it (GET /v1/search, GET /v1/events), so a reader never sees it behind.
 */
export const searchLagFacts = 256;
/** 本人 (issue 32): facts read at a time while the search index is brought up to the log. */
export const searchCatchUpPageFacts = 2000;

/** rules.json: the most variable names an agent's `env` may list. */
export const agentEnvNamesMax = 100;
/** rules.json (issue 26): the most paths an agent's `writable` may list. */
export const agentWritablePathsMax = 32;
/** rules.json (issue 26): the most devices an agent's `devices` may list. */
export const agentDevicesMax = 32;
/** rules.json (issue 26 round 33, F33a-1): the most loopback ports an agent's `loopbackPorts` may list. */
export const agentLoopbackPortsMax = 32;

/** Worker: stop = SIGTERM to the process group, SIGKILL after this long. */
export const stopGraceMs = 10_000;
/**
 * Starts of one sandboxed launch (an agent's, a tool plugin's) when bubblewrap ends before the program ran: the sandbox
 * is planned again from the mount table for each (a mount in the plan can be gone by the time bwrap sets it up).
 */
export const sandboxLaunchTriesMax = 2;
/** Worker: a run's output is kept this long after it ends. */
export const runOutputKeepMs = 14 * 24 * 60 * 60_000;
/** Worker: a receipt is rewritten at most this many times. */
export const receiptRewritesMax = 2;

/**
 * rules.json (our choice; protocol.md 规则 is silent): a file over any of these is refused whole, like a syntax error
 * (the old rules keep running, one card says why), checked before the file is walked.
 * Size in bytes of UTF-8; depth counts objects and arrays inside one another, the file's own braces included (a valid
 * file needs 5); the counts are entries of `sources`, `agents`, `channels`, `rules` and `elsewhere`.
 */
export const rulesFileMaxBytes = 4 * 1024 * 1024;
export const rulesFileDepthMax = 16;
export const rulesFileSourcesMax = 1000;
export const rulesFileAgentsMax = 1000;
export const rulesFileChannelsMax = 100;
export const rulesFileRulesMax = 1000;
export const rulesFileElsewhereMax = 1000;
/**
 * Items of each list inside one entry: `askFirst`, a rule's `when.types`, `emits.types`, `channels` and `tools`, an
 * agent's `command`, a channel's `answerers`, an approval's `allow_session_keys`.
 */
export const rulesFileListItemsMax = 100;
/** rules.json (our choice): entries of `approvals` (issue 16). */
export const rulesFileApprovalsMax = 1000;

/**
 * Tool plugins (spec tool-plugins.md §2, as the public implementation): a plugin's name and a tool's name, 1 to this
 * many characters. rules.json's `tools` and `approvals` and the tool host's manifests (src/tools) use the same limits.
 */
export const toolPluginNameMaxChars = 128;
export const toolNameMaxChars = 128;
/** rules.json `allow_session_keys` (our choice): one pattern, in characters (a session key is `<rule>:<lane>`, at most 201). */
export const sessionKeyPatternMaxChars = 300;
/**
 * rules.json `approvalWaitSeconds` (issue 16): how long an agent's call in `prompt` mode waits for the owner's answer
 * before it returns "awaiting approval" to the agent — by default, and at most (our choice: an agent's tool call
 * should not hang for long).
 */
export const approvalWaitSecondsDefault = 60;
export const approvalWaitSecondsMax = 600;

/**
 * Supervised loops (the local worker, channels; src/worker/loops.ts): a loop that threw, returned or was faulted by an
 * uncaught error is started again after this long, doubling up to `loopRestartMaxMs`.
 */
export const loopRestartFirstMs = 1_000;
export const loopRestartMaxMs = 5 * 60_000;
/** Supervised loops: one that ran this long before failing starts again from `loopRestartFirstMs`. */
export const loopStableMs = 60_000;

/**
 * HTTP edge (issue 14): a request's headers must arrive within this long of the connection's first byte or of the
 * previous response (408, connection closed). Long polls are not affected: they wait for the response, not the request.
 */
export const requestHeadersTimeoutMs = 10_000;
/** HTTP edge: the whole request, headers and body, must arrive within this long (408, connection closed). */
export const requestBodyTimeoutMs = 30_000;
/** HTTP edge: how often the server looks for requests over the two limits above (their precision). */
export const timeoutCheckIntervalMs = 1_000;
/**
 * HTTP edge: connections whose current or last request carried no valid key or run token, per client address. Over
 * the cap the oldest such connections are closed: those that sent a request without a key, and those silent for
 * `silentConnectionGraceMs`.
 */
export const anonymousConnectionsPerAddressMax = 64;
/** HTTP edge: the same over all addresses together. */
export const anonymousConnectionsMax = 512;
/** HTTP edge: a new connection may send nothing this long before it counts as one the caps may close. */
export const silentConnectionGraceMs = 2_000;

/**
 * Log lines a caller can cause (a refused webhook, a request's internal error; src/host/log-limit.ts): at most one of
 * a kind (route and reason) per this long; the next one of that kind says how many were left out meanwhile.
 */
export const callerLogIntervalMs = 60_000;
/** Kinds of such lines remembered at once; a line of a new kind beyond this is left out until older kinds expire. */
export const callerLogKindsMax = 1_000;

/**
 * Owner console (issue 17; src/host/console-session.ts): a sign-in link that `agent-autoloop console` prints works
 * once, within this long of being made.
 */
export const consoleSignInValidMs = 5 * 60_000;
/** Owner console: sign-in links made and not yet used, at most; making one more forgets the oldest. */
export const consoleSignInsPendingMax = 16;
/**
 * Owner console (issue 30): a session ends this long after its sign-in, whatever it does meanwhile (the cookie's
 * Max-Age). Sessions survive a restart of the hub, so an update does not sign the owner out.
 */
export const consoleSessionMaxMs = 90 * 86_400_000;
/** Owner console: a session that made no request for this long ends (idle expiry). */
export const consoleSessionIdleMs = 30 * 86_400_000;
/**
 * Owner console: how stale a session's last use may be in the home's file: a use is written only once it is this much
 * newer than the written one, so a console polling every second writes the file at most once an hour.
 */
export const consoleSessionTouchMs = 3_600_000;
/** Owner console: sessions held at once, at most; a sign-in past it ends the oldest session. */
export const consoleSessionsMax = 64;

/**
 * Tool calls (issue 16; spec tool-plugins.md §5, §8): the bounded preview of a call's arguments that an approval card
 * shows, in code points (the public implementation's `args_preview` is at most 512 bytes).
 */
export const toolCallPreviewMaxCodepoints = 512;
/**
 * Tool calls (issue 26 #5): the whole arguments an approval card keeps for the console and its link page, at most this
 * many code points of their canonical JSON; longer ones are not kept whole and the card says so.
 */
export const toolCallArgumentsMaxCodepoints = 32_768;
/**
 * Tool calls (issue 26 #4): the files of a plugin a call body lists (their short hashes, for the card to say which
 * changed since the owner trusted it); a tool plugin's folder may hold no more (src/tools/limits.ts `pluginFilesMax`).
 */
export const toolCallFilesMax = 1000;
/**
 * Tool calls: one file's path inside its plugin folder in a call body, at most this many characters (a longer one
 * refuses the plugin). With the other bounds a call body stays well under `requestBodyMaxBytes`.
 */
export const toolCallFilePathMaxChars = 256;
/** An approval card names at most this many changed files (the rest are counted). */
export const toolCardFilesMax = 10;
/** Tool calls (issue 26 #3): a sandbox's binds a call body may list (a manifest lists at most 256 `binds`). */
export const toolCallBindsMax = 256;
/** Tool calls: a bind's source or container path in a call body, at most this many characters. */
export const toolCallBindPathMaxChars = 1024;
/** An approval card lists at most this many binds (the rest are counted; `plugins inspect` lists all). */
export const toolCardBindsMax = 8;
/** An approval card shows a path (a bind's source or container, a file's name) cut to this many code points. */
export const toolCardPathMaxCodepoints = 160;
/** Tool calls: calls one run may ask the hub about; later ones are refused (a looping agent stops costing facts). */
export const toolCallsPerRunMax = 1000;
/**
 * Tool calls: approval cards one run may hold open at once; a call that would ask once more is denied, saying so
 * (issue 26 round 6, F9: one run opened 28 cards with 30 concurrent calls of distinct arguments).
 */
export const toolApprovalsOpenPerRunMax = 5;
/** Tool calls: how long one GET of a call's decision or of a parked call's result may be held, in seconds. */
export const toolCallWaitMaxSeconds = 600;
/**
 * Async task ids: at least this many characters — any id of corlinman's plugins (`abc-123`): the credential of a
 * callback is the key of its `callback_url`, not the id (issue 34).
 */
export const toolTaskIdMinChars = 1;
/**
 * A task id that is its callback's only credential (the legacy path, `/plugin-callback/<task_id>`, without the key of
 * the `callback_url`, taken only for a plugin rules.json's approvals mark with `legacy_callbacks`): at least this many
 * characters, unless they mark it with `legacy_callback_short_ids` (issue 16; issue 34; hostile round 37, F37b-3).
 */
export const toolTaskIdLegacyMinChars = 16;
/** The key a call's `callback_url` carries (base64url of 24 random bytes): this many characters (issue 34). */
export const toolCallbackKeyChars = 32;
/**
 * Tool bridge (issue 26 round 5, F4): connections one run's tools socket holds at once, those still proving
 * themselves included; a further one is refused. An agent's CLI opens one per MCP client it starts.
 */
export const bridgeConnectionsPerRunMax = 16;
/**
 * Tool bridge: bytes of unfinished lines (an MCP message not yet ended by its line break) all connections of one run
 * may hold in the worker together; the connection whose bytes would pass it is closed. Room for three messages of the
 * bridge's longest line (4 MiB) at once.
 */
export const bridgeBufferedBytesPerRunMax = 16 * 1024 * 1024;
/**
 * Tool bridge: calls one run's agent may have in flight at once (from its arrival to its result, a wait for the owner's
 * answer included); a further one is refused, and recorded, until one ends. 300 calls at once started ~230 plugin
 * processes and held a 2-core computer's hub 142 s (hostile round 44, F44b-3).
 */
export const bridgeCallsInFlightPerRunMax = 16;
/** Async task ids: at most this many characters (they travel in a URL path). */
export const toolTaskIdMaxChars = 200;
/** A tool call's timeout when its manifest and its caller give none (spec tool-plugins.md §2), and a parked call's (ms). */
export const toolCallTimeoutMsDefault = 30_000;
/** The longest timeout of a tool call, and so of a parked async call's deadline: one hour (ms). */
export const toolCallTimeoutMsMax = 3_600_000;
/**
 * How long after a call is allowed the hub waits for its outcome before ending it `error`, worker lost (issue 26: a
 * worker restarted while the call ran): the longest a call may run and a minute for the report to arrive (ms). A call
 * of a run also ends so when its run (or its attempt) ends first.
 */
export const toolCallOutcomeWaitMs = toolCallTimeoutMsMax + 60_000;
/**
 * The owner's call sent to the hub (`POST /v1/tools/invoke`, `plugins invoke` while a hub runs; issue 34 #5): the hub
 * writes an empty line at least this often while the call runs, so that a call silent for minutes is not taken for a
 * hub gone (ms).
 */
export const toolInvokeHeartbeatMs = 15_000;
/** Progress notifications of one owner's call the hub sends on (`POST /v1/tools/invoke`); later ones are dropped. */
export const toolInvokeProgressLinesMax = 1000;
/**
 * The longest an answer of `POST /v1/tools/invoke` stays open: the longest call and a minute for its tool list and
 * decision (ms); then the call is stopped and ends as the tool host says (an error or a timeout).
 */
export const toolInvokeStreamMaxMs = toolCallTimeoutMsMax + 60_000;
/**
 * The longest line of an answer of `POST /v1/tools/invoke` a client reads, in UTF-8 bytes: a tool's result is at most
 * one line of a plugin's stdout (4 MiB), JSON-escaped again on the way; a longer line ends the read as a bad answer.
 */
export const toolInvokeLineMaxBytes = 16 * 1024 * 1024;
/** Async calls parked and not yet completed, over the whole hub; more are recorded as errors, not parked. */
export const toolParkedCallsMax = 10_000;
/** A callback's `result` as the hub keeps it (its JSON, UTF-8 bytes); a bigger one is refused (400, naming `result`). */
export const toolResultMaxBytes = 256 * 1024;
/** A callback's `result`: arrays and objects inside one another at most this deep (the outermost counts 1). */
export const toolResultDepthMax = 64;
/** A callback's error `message`, in code points (longer ones are cut). */
export const toolErrorMessageMaxCodepoints = 2000;
/** A callback's error `code` when it is a string, in characters. */
export const toolErrorCodeMaxChars = 100;
/**
 * An owner's answer to a tool call's card that came after the agent stopped waiting is kept for the next call of the
 * same tool in the same session this long (ms); an older one is not used (the owner is asked again).
 */
export const toolGrantValidMs = 24 * 60 * 60_000;

/**
 * What a workflow keeps of one step's output (a prompt's last message, a tool's result, an answer) for later steps'
 * `{{steps.<id>}}` and `artifact` files, in UTF-16 code units; beyond it the output is cut (issue 18).
 */
export const workflowOutputMaxChars = 256 * 1024;

/**
 * A workflow artifact as the hub keeps it (issue 18: `PUT /v1/runs/:id/artifacts/:file`), in UTF-8 bytes of its text;
 * a bigger one is refused (400, naming `text`) and nothing is written.
 */
export const artifactMaxBytes = 256 * 1024;
/** Artifacts one run may send (files of distinct names; replacing one of them is always taken). */
export const artifactsPerRunMax = 50;
/**
 * Channels `GET /metrics` counts failed deliveries of by name since the hub started (issue 32); failures of channels
 * past this many are counted under `other`, so a stream of made-up names cannot grow the hub's memory.
 */
export const metricsChannelLabelsMax = 1000;

/**
 * The home's record of what the hub's starts ran or loaded code from (`code-folders.json`, issue 26 round 6): at most
 * this many folders and homes each; the oldest go first (a folder the hub used long ago and not since).
 */
export const codeFoldersKeptMax = 2000;
/**
 * A run's transcript (issue 30: what the agent did) as the hub keeps it, in bytes of its NDJSON file, over all the
 * run's attempts: entries past it are dropped and one `cut` entry says so. The worker stops sending once told.
 */
export const transcriptMaxBytes = 4 * 1024 * 1024;
/** The text of one transcript entry (a message, a tool's arguments or result, an output line), in code points; longer is cut with "…". */
export const transcriptTextMaxCodepoints = 4000;
/** A tool's name or a tool call's id in a transcript entry, in code points. */
export const transcriptNameMaxCodepoints = 200;
/** Entries one `POST /v1/runs/:id/transcript` carries at most. */
export const transcriptBatchMaxEntries = 200;
/** How often the worker sends what it has of a run's transcript, in ms (sooner when a batch is full). */
export const transcriptBatchIntervalMs = 1000;
/**
 * Entries the worker holds for a run on their way to the hub (a burst of output, a hub that cannot be reached);
 * older ones are dropped beyond it. Each launch gives at most `transcriptMaxBytes` of entries anyway.
 */
export const transcriptQueueMaxEntries = 50_000;
/** Of an agent's failed launch, the last this many characters of its stderr go into the transcript. */
export const transcriptStderrTailChars = 2000;
/** One output line the worker maps to transcript entries, in bytes; a longer line is cut (a JSON line then reads as text). */
export const transcriptLineMaxBytes = 1024 * 1024;
/** One page of `GET /v1/runs/:id/transcript`: at most this many bytes of the file are read per request. */
export const transcriptPageMaxBytes = 256 * 1024;
/** How long a run's transcript is kept after the run ended, in ms (protocol.md: each round's output 14 days). */
export const transcriptRetentionMs = 14 * 24 * 60 * 60_000;
/** How often the hub removes transcripts past their retention, in ms. */
export const transcriptSweepIntervalMs = 60 * 60_000;

/**
 * The most bytes of a runtime's configuration file read to learn where it keeps code (worker/runtime-places.ts, issue
 * 26 rounds 48–49): Go's environment file (`go env -w` writes it), `~/.npmrc`, `~/.yarnrc.yml`, cargo's and uv's
 * configuration, `~/.condarc`, Maven's `settings.xml`. Each holds a few lines; a larger one is read this far.
 */
export const runtimeConfigFileBytesMax = 64 * 1024;

/**
 * The most entries looked at in a project's `node_modules/.pnpm` or uv `.venv/lib` to tell whether its files are hard
 * links into a shared store (worker/shared-stores.ts, issue 26 round 49): every file is linked alike, so a sample tells.
 */
export const sharedStoreSampleEntriesMax = 2000;

/**
 * The most packages of one `node_modules` or virtual environment looked at for a hard link into a shared store
 * (worker/shared-stores.ts, issue 26 round 51): each package's `package.json` (or `*.dist-info/METADATA`); a folder with
 * more is taken as linked (kept read-only), never as looked through.
 */
export const sharedStorePackagesMax = 20_000;
