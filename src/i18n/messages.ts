/**
 * The message catalog: every text meant for a person, in Chinese and English, each `{name}` placeholder in both.
 * The language comes from `AGENT_AUTOLOOP_LANG`, else `LANG` (anything starting with `zh` is Chinese, else English).
 *
 * - `t(lang, id, params)`: a text in one language (pure: the kernel uses it for refusals and the cards it writes).
 * - `fixedText(id, params)`: a text the protocol fixes (`没有这条规则：<名字>`) or that goes into data (a manual
 *   run's summary, a receipt's rejections): its Chinese text, on every machine, so the same inputs give the same facts.
 * - `localize(text, lang)`: a catalog text of either language shown in `lang` (a hub's refusal, commander's errors).
 */

/** A language of the catalog: Chinese or English. */
export type Lang = "zh" | "en";

type Params = Record<string, string | number>;
type Entry = { zh: string; en: string };

const catalog = {
  // validation
  "field.required": { zh: "{field}：必填", en: "{field}: required" },
  "field.type": { zh: "{field}：应为 {type}", en: "{field}: must be {type}" },
  "field.maxLength": { zh: "{field}：最多 {limit} 个字", en: "{field}: at most {limit} characters" },
  "field.minLength": { zh: "{field}：不能为空", en: "{field}: must not be empty" },
  "field.pattern": { zh: "{field}：格式不对，应为 {what}", en: "{field}: wrong format, expected {what}" },
  "field.unknown": { zh: "{field}：不认识的字段", en: "{field}: unknown field" },
  "field.enum": { zh: "{field}：只能是 {values}", en: "{field}: must be one of {values}" },
  "field.range": { zh: "{field}：超出范围", en: "{field}: out of range" },
  "field.maxItems": { zh: "{field}：最多 {limit} 项", en: "{field}: at most {limit} items" },
  "field.minItems": { zh: "{field}：至少 {limit} 项", en: "{field}: at least {limit} items" },
  "field.invalid": { zh: "{field}：不合法", en: "{field}: invalid" },
  "body.json": { zh: "请求体不是合法的 JSON", en: "the request body is not valid JSON" },
  "body.object": { zh: "请求体应为 JSON 对象", en: "the request body must be a JSON object" },
  "body.tooLarge": { zh: "请求体超过 {limit} 字节", en: "the request body is larger than {limit} bytes" },
  "body.utf8": { zh: "请求体不是合法的 UTF-8", en: "the request body is not valid UTF-8" },
  "internal": { zh: "中台内部出错（详情见中台日志）", en: "internal error (the hub's log has the details)" },
  "query.invalid": { zh: "查询参数 {field} 不合法", en: "query parameter {field} is invalid" },
  "cli.badAnswer": { zh: "{url} 的回答不合协议：{problem}", en: "the answer of {url} does not match the protocol: {problem}" },
  // auth
  "auth.missing": { zh: "缺少 Authorization: Bearer <密钥>", en: "missing Authorization: Bearer <key>" },
  "auth.unknown": { zh: "密钥不对", en: "unknown key" },
  "auth.kind": { zh: "这把密钥是{actual}的，这里要{expected}的", en: "wrong kind of key ({actual}); this needs a key of kind {expected}" },
  "auth.token": { zh: "token 不对或已失效（每次领取都会重新签发）", en: "the token is wrong or no longer valid (each claim issues a new one)" },
  "auth.notYourRun": { zh: "这一轮不是交给这个接单程序的", en: "this run was not given to this worker" },
  // not found
  "notFound.route": { zh: "没有这个接口：{method} {path}", en: "no such endpoint: {method} {path}" },
  "notFound.run": { zh: "没有这一轮：{id}", en: "no such run: {id}" },
  "notFound.card": { zh: "没有这张卡片：{id}", en: "no such card: {id}" },
  "notFound.rule": { zh: "没有这条规则：{name}", en: "no such rule: {name}" },
  // conflicts
  "result.conflict": { zh: "这次执行已经交过不同的结果", en: "a different result was already submitted for this attempt" },
  "result.ended": { zh: "这一轮已经结束", en: "this run has already ended" },
  "card.answered": { zh: "这张卡片已经回答过了", en: "this card was already answered" },
  "card.closed": { zh: "这张卡片已经结案", en: "this card is already closed" },
  "card.fyi": { zh: "仅告知的通知不能回答", en: "an fyi notice cannot be answered" },
  "card.notForChannel": { zh: "这张卡片不发给这个通道", en: "this card is not sent to this channel" },
  "card.version": { zh: "version：卡片没有这个版本（现在是 {version}）", en: "version: the card has no such version (now {version})" },
  "card.choiceRange": { zh: "choice：只能是 0 到 {max}", en: "choice: must be 0 to {max}" },
  "card.choiceOrText": { zh: "choice 或 text 至少写一个", en: "give choice or text" },
  "card.noticeChoice": { zh: "choice：通知只有一个选项 0（已处理）", en: "choice: a notice has one option, 0 (handled)" },
  "card.byRequired": { zh: "by：通道转达回答时必填", en: "by: required when a channel relays an answer" },
  "card.refRequired": { zh: "ref：通道转达回答时必填", en: "ref: required when a channel relays an answer" },
  "card.byNotAnswerer": { zh: "by：{by} 不在这个通道的 answerers 里", en: "by: {by} is not among this channel's answerers" },
  "card.refMismatch": { zh: "ref：和送达的那条消息不一致", en: "ref: does not match the delivered message" },
  "card.notDelivered": { zh: "这张卡片还没有送达这个通道", en: "this card has not been delivered to this channel" },
  "run.notCancellable": { zh: "这一轮已经结束，不能停止", en: "this run has already ended and cannot be stopped" },
  "work.claim": { zh: "claim：必填，最多 {limit} 个字符", en: "claim: required, at most {limit} characters" },
  "work.claimControl": { zh: "claim：不能有控制字符", en: "claim: no control characters" },
  "work.claimOther": { zh: "claim：这个编号已经领过另一份活", en: "claim: this claim id already took another job" },
  "key.kind": { zh: "种类只能是 source、worker、channel、owner", en: "kind must be source, worker, channel or owner" },
  "key.oldName": { zh: "名字：1 到 100 个字，不能有控制字符或 /", en: "name: 1 to 100 characters, no control characters or /" },
  "key.name": { zh: "名字：字母、数字和 _ . -（最多 100 个），以字母或数字开头", en: "name: letters, digits, _ . - (at most 100), starting with a letter or digit" },
  "key.reserved": { zh: "「{name}」是中台自己的事件用的来源名（schedule：定时规则；elsewhere：别处的任务），不能有密钥", en: "\"{name}\" is a source name the hub uses for its own events (schedule: cron rules; elsewhere: elsewhere tasks); it gets no key" },
  "key.note.source": { zh: "注意：rules.json 没有声明来源「{name}」（它的来源：{known}）：用这把密钥发来的事件会记下来，但在声明之前没有规则接", en: "note: rules.json declares no source \"{name}\" (its sources: {known}): its events are recorded but no rule takes them until it does" },
  "key.note.worker": { zh: "注意：rules.json 里没有 Agent 在接单程序「{name}」上跑（它的接单程序：{known}）：在有 Agent 写上它之前，它领不到活", en: "note: no agent in rules.json runs on worker \"{name}\" (its workers: {known}): it gets no runs until one does" },
  "key.note.channel": { zh: "注意：rules.json 没有声明通道「{name}」（它的通道：{known}）：在声明之前没有卡片发给它", en: "note: rules.json declares no channel \"{name}\" (its channels: {known}): no card goes to it until it does" },
  "key.note.none": { zh: "一个也没有", en: "none" },
  "key.exists": { zh: "已经有这把密钥：{kind} {name}", en: "this key already exists: {kind} {name}" },
  // card texts written by the hub
  "answer.handled": { zh: "已处理", en: "Handled" },
  "result.executed": { zh: "已执行", en: "Done" },
  "result.notNeeded": { zh: "不用决定了", en: "No longer needed" },
  "result.notNeededWhy": { zh: "不用决定了：{reason}", en: "No longer needed: {reason}" },
  "rejected.scope": { zh: "不在本轮核对范围", en: "outside this run's scope" },
  "rejected.noEmits": { zh: "规则没有写 emits，不能发事件", en: "the rule has no emits: it may not send events" },
  "rejected.type": { zh: "type {type} 不在 emits.types 里", en: "type {type} is not in emits.types" },
  "control.elsewhere": { zh: "「{name}」是 elsewhere 任务：中台不启动它，不能暂停、恢复或手动运行", en: "\"{name}\" is an elsewhere task: the hub does not start it, so it cannot be paused, resumed or run" },
  "control.untilPast": { zh: "until：要晚于现在", en: "until: must be later than now" },
  "control.manualSummary": { zh: "{name} 手动运行", en: "{name} ran it by hand" },
  "budget.reason": { zh: "超出预算", en: "over budget" },
  "budget.title.day": { zh: "「{rule}」今天的预算用完了，已暂停", en: "\"{rule}\" used up today's budget and is paused" },
  "budget.title.week": { zh: "「{rule}」本周的预算用完了，已暂停", en: "\"{rule}\" used up this week's budget and is paused" },
  "budget.text": { zh: "已用 {used}，预算 {limit}。已经领走的这一轮照常做完。这个周期到 {until} 结束。用 agent-autoloop resume 恢复也算这个周期内恢复。", en: "Used {used} of {limit}. Runs already claimed finish normally. This period ends at {until}. Resuming with agent-autoloop resume also resumes it for the rest of the period." },
  "budget.resume": { zh: "这个周期内恢复（不再因预算暂停）", en: "Resume for the rest of this period" },
  "budget.keep": { zh: "保持暂停", en: "Keep paused" },
  "budget.resumed": { zh: "已恢复，这个周期内不再因预算暂停", en: "Resumed; no budget pause again this period" },
  "budget.kept": { zh: "已保持暂停", en: "Kept paused" },
  "tell.sourceTask": { zh: "task：来源的密钥只能以自己的名义说话", en: "task: a source key speaks only for its own source" },
  "tell.noTask": { zh: "没有这个 elsewhere 任务：{name}", en: "no such elsewhere task: {name}" },
  "tell.notYourTask": { zh: "任务「{name}」不是交给这个接单程序的", en: "task \"{name}\" is not given to this worker" },
  "tell.askOrText": { zh: "ask 和 key/text 只能写一种", en: "give either ask or key and text, not both" },
  "tell.askNeedsCwd": { zh: "ask：只有写了 cwd 的 elsewhere 任务能提问", en: "ask: only an elsewhere task with cwd can ask" },
  "in.noAdapter": { zh: "rules.json 里没有配置了 adapter 的来源 {source}", en: "rules.json declares no source {source} with an adapter" },
  "in.refused": { zh: "不接受：这个地址只收用来源的秘密签过名的 Webhook", en: "not accepted: this address takes only webhooks signed with their source's secret" },
  "in.refusedLog": { zh: "Webhook /v1/in/{source} 在读请求体之前被拒：{reason}", en: "webhook /v1/in/{source} refused before its body was read: {reason}" },
  "log.leftOut": { zh: "（上一条之后又有 {n} 条同类的没记）", en: "({n} more like it since the last one were not logged)" },
  "body.aborted": { zh: "请求体没传完连接就断了", en: "the connection closed before the request body was complete" },
  "in.noSecret": { zh: "没有秘密：在 secrets.env 里设置 {variable}，然后重启中台", en: "no secret: set {variable} in secrets.env and restart the hub" },
  "in.noSignature": { zh: "请求没有 {header} 头", en: "the request has no {header} header" },
  "in.bad": { zh: "adapter 交回的第 {n} 条事件不合法：{error}", en: "event {n} from the adapter is invalid: {error}" },
  "link.expired": { zh: "这个链接已经过期（卡片创建 7 天后失效）", en: "This link has expired (links last 7 days from the card's creation)" },
  "link.unknown": { zh: "没有这张卡片，或链接不对", en: "No such card, or the link is wrong" },
  "link.recommended": { zh: "推荐", en: "recommended" },
  "link.sendText": { zh: "用这段话回答", en: "Answer with these words" },
  "link.answer": { zh: "回答", en: "Answer" },
  "link.answered": { zh: "已回答", en: "Answered" },
  // the hub's root page (a browser opening its address)
  "root.title": { zh: "agent-autoloop 中台", en: "agent-autoloop hub" },
  "root.what": { zh: "这是一个 agent-autoloop 中台：它把事件变成编码 Agent 的一轮轮工作，只把需要人的事带给你。它在 /v1 下用 JSON 和持有密钥的来源、接单程序、通道和本人说话；这个页面上没有可以点的东西。", en: "This is an agent-autoloop hub: it turns events into coding-agent runs and brings you only what needs a human. It speaks JSON under /v1 to the sources, workers, channels and owner that hold its keys; there is nothing to click on this page." },
  "root.status": { zh: "它在做什么：在运行它的电脑上执行 {command}。", en: "What it is doing: run {command} on the computer it runs on." },
  "root.readme": { zh: "怎么用：agent-autoloop 代码目录里的 README。", en: "How to use it: the README in the agent-autoloop checkout." },
  "root.health": { zh: "它是否在线、是哪个版本：{path}。", en: "Whether it is up, and which release: {path}." },
  // texts of chat channels (webhook, feishu)
  "channel.fyi": { zh: "仅告知", en: "FYI" },
  "channel.answerHere": { zh: "点击处理", en: "Answer here" },
  "channel.answerLine": { zh: "回答：{answer}", en: "Answer: {answer}" },
  "channel.byLine": { zh: "回答人：{by}", en: "By: {by}" },
  "channel.resultLine": { zh: "结果：{result}", en: "Result: {result}" },
  "channel.answerCommand": { zh: "回答：agent-autoloop answer {id} {choices}", en: "Answer: agent-autoloop answer {id} {choices}" },
  "feishu.recorded": { zh: "已记录：{choice}", en: "Recorded: {choice}" },
  "feishu.refused": { zh: "没有记录：{error}", en: "Not recorded: {error}" },
  "feishu.hubDown": { zh: "连不上中台，没有记录，请稍后再点", en: "The hub cannot be reached; nothing was recorded. Try again shortly" },
  "feishu.badPress": { zh: "读不懂这次点击，没有记录", en: "This press could not be read; nothing was recorded" },
  "feishu.noOperatorId": { zh: "飞书没有给出你的 {idType}，没有记录（检查应用的权限）", en: "Feishu did not send your {idType}; nothing was recorded (check the app's permissions)" },
  "feishu.optionRequired": { zh: "飞书通道：config.json 里要写 {field}", en: "feishu channel: {field} is required in config.json" },
  "feishu.optionInvalid": { zh: "飞书通道：{field} 应为 {what}", en: "feishu channel: {field} must be {what}" },
  "feishu.optionUnknown": { zh: "飞书通道：不认识的选项 {field}", en: "feishu channel: unknown option {field}" },
  "feishu.answerersInConfig": { zh: "飞书通道：answerers 写在 rules.json 的 channels.{name}.answerers 里，不写在 config.json", en: "feishu channel: answerers belong in rules.json (channels.{name}.answerers), not in config.json" },
  "feishu.noSecret": { zh: "飞书通道：缺少 App Secret：在 secrets.env 写 {variable}=…（或在 config.json 写 appSecret）", en: "feishu channel: no app secret: put {variable}=… in secrets.env (or appSecret in config.json)" },
  "feishu.longConnection": { zh: "长连接失败：{error}；{seconds} 秒后重连", en: "long connection failed: {error}; trying again in {seconds} s" },
  "add.badName": { zh: "插件名只能用小写字母、数字和 -，从仓库名算出来的是「{name}」", en: "plugin names use lowercase letters, digits and -; the repository name gives \"{name}\"" },
  "add.exists": { zh: "已经装过插件 {name}：{dir}", en: "plugin {name} is already installed: {dir}" },
  "add.builtIn": { zh: "{name} 是内置插件：装上 {repo} 会在所有用到 \"{name}\" 的地方顶替它；确实要这样就加 --replace", en: "{name} is a built-in plugin: installing {repo} would replace it wherever \"{name}\" is used; add --replace to do that" },
  "add.replaced": { zh: "已安装插件 {name} 到 {dir}，顶替内置的同名插件；在 rules.json 里用 \"use\": \"{name}\" 或 \"adapter\": \"{name}\"", en: "installed plugin {name} in {dir} in place of the built-in one; use it with \"use\": \"{name}\" or \"adapter\": \"{name}\" in rules.json" },
  "add.failed": { zh: "git clone 失败：{error}", en: "git clone failed: {error}" },
  "add.done": { zh: "已安装插件 {name} 到 {dir}；在 rules.json 里用 \"use\": \"{name}\" 或 \"adapter\": \"{name}\"", en: "installed plugin {name} in {dir}; use it with \"use\": \"{name}\" or \"adapter\": \"{name}\" in rules.json" },
  "add.badFolderName": { zh: "插件名只能用小写字母、数字和 -，从文件夹名算出来的是「{name}」", en: "plugin names use lowercase letters, digits and -; the folder name gives \"{name}\"" },
  "add.notFile": { zh: "{file} 不是文件、文件夹或链接；插件文件夹里只能有这些，什么都没安装", en: "{file} is not a file, folder or link, which is all a plugin folder may hold; nothing was installed" },
  "add.tooLarge": { zh: "{dir} 里（不算 .git 和 node_modules）超过 {entries} 项或 {mib} MiB，不像一个插件文件夹；什么都没安装", en: "{dir} holds more than {entries} entries or {mib} MiB (without .git and node_modules): not a plugin folder? Nothing was installed" },
  "add.copyFailed": { zh: "复制 {dir} 失败：{error}；什么都没安装", en: "copying {dir} failed: {error}; nothing was installed" },
  "cli.choice": { zh: "choice：写选项的编号（0、1……），自己的话用 --text", en: "choice: the option's number (0, 1, …); use --text for your own words" },
  "cli.keyConfig": { zh: "已把新密钥写进 config.json；重启 serve 后本机的{what}才用新密钥", en: "config.json now holds the new key; restart serve so the local {what} uses it" },
  "cli.keyConfigRemoved": { zh: "注意：config.json 里的{what}还在用这把已删除的密钥", en: "note: the local {what} in config.json still uses this removed key" },
  "serve.cannotListen": { zh: "没法在 {address} 上监听：{why}。用 --listen HOST:PORT 换一个地址（端口写 0 就自动挑一个空闲的），或改 {config} 里的 \"listen\"", en: "cannot listen on {address}: {why}. Pick another address with --listen HOST:PORT (port 0 picks a free port), or change \"listen\" in {config}" },
  "serve.addressInUse": { zh: "已经有别的程序在用这个地址", en: "another program already uses this address" },
  "serve.addressNotHere": { zh: "这台电脑没有这个地址", en: "this computer has no such address" },
  "serve.addressDenied": { zh: "没有权限在这个地址上监听（1024 以下的端口要特权）", en: "not allowed to listen there (ports below 1024 need privileges)" },
  "serve.locked": { zh: "这个目录已经有一个中台在运行（进程 {pid}）：{home}", en: "another hub already runs on this home (pid {pid}): {home}" },
  "serve.lockedByKeys": { zh: "agent-autoloop key new 或 key remove（进程 {pid}）正在改这个目录的密钥：稍等再试（{home}）", en: "agent-autoloop key new or key remove (pid {pid}) is changing this home's keys right now: try again in a moment ({home})" },
  "home.notFile": { zh: "{file} 是个目录，agent-autoloop 要在这里放一个文件：把这个目录移走或删掉，再试一次", en: "{file} is a folder where agent-autoloop keeps a file: move or remove that folder, then try again" },
  "home.notFolder": { zh: "{file} 是个文件，agent-autoloop 要在这里放一个目录：把这个文件移走或删掉，再试一次", en: "{file} is a file where agent-autoloop keeps a folder: move or remove that file, then try again" },
  "file.pathNotFolder": { zh: "{file}：路径上有一段是文件，那里应该是目录：把那个文件移走或删掉，再试一次", en: "{file}: a part of this path is a file where a folder belongs: move or remove that file, then try again" },
  "file.denied": { zh: "{file}：没有权限。运行 agent-autoloop 的用户要能读写它：用 chown 或 chmod 改好，或者用它的属主运行", en: "{file}: permission denied. The user running agent-autoloop must be able to read and write it: chown or chmod it, or run agent-autoloop as its owner" },
  "file.readOnly": { zh: "{file}：所在的文件系统是只读的，agent-autoloop 要能在它的目录里写文件", en: "{file}: the file system is read-only; agent-autoloop must be able to write in its home" },
  "file.full": { zh: "{file}：磁盘满了（或超出配额）：腾出空间再试一次", en: "{file}: no space left on the disk (or over quota): free some space, then try again" },
  "result.cancelled": { zh: "已停止", en: "Stopped" },
  "card.failing.title": { zh: "「{rule}」连续 {n} 次没跑成", en: "\"{rule}\" failed {n} times in a row" },
  "card.failing.text": { zh: "第 {run} 轮：{error}\n它会接着重试（5 分钟起，每次翻倍，最长 1 小时），第 10 次还不行就不再重试。", en: "Run {run}: {error}\nIt keeps retrying (from 5 min, doubling, at most 1 h) and gives up at the 10th failure." },
  "card.gaveUp.title": { zh: "「{rule}」连续 {n} 次没跑成，不再重试", en: "\"{rule}\" failed {n} times in a row; no more retries" },
  "card.gaveUp.text": { zh: "第 {run} 轮已记为 cancelled：{error}", en: "Run {run} is now cancelled: {error}" },
  "card.rulesError.title": { zh: "rules.json 有错，旧规则继续生效", en: "rules.json has an error; the old rules keep running" },
  "card.rulesMissing.title": { zh: "读不到 rules.json，旧规则继续生效", en: "rules.json cannot be read; the old rules keep running" },
  "card.ruleGone.title": { zh: "规则「{rule}」没了，第 {run} 轮已取消", en: "Rule \"{rule}\" is gone; run {run} is cancelled" },
  "card.ruleGone.text": { zh: "规则被删掉或改了名，这一轮还在排队或等待重试，记为 cancelled。", en: "The rule was deleted or renamed while this run was queued or waiting for a retry; it is cancelled." },
  "card.hops.title": { zh: "事件链超过 {max} 层，没有派发", en: "An event chain went past {max} hops and was not dispatched" },
  "card.hops.text": { zh: "来源 {source} 的事件 {id}（{type}）是第 {hops} 层。", en: "Event {id} ({type}) from {source} is at hop {hops}." },
  "card.uncertain.title": { zh: "第 {run} 轮（{rule}）情况不明", en: "Run {run} ({rule}) is uncertain" },
  "card.uncertain.text": { zh: "接单程序 {worker} 5 分钟没报这一轮，已放开这一组。它后来交的结果照样收。", en: "Worker {worker} has not reported this run for 5 minutes; its group is released. A later result is still accepted." },
  "card.offline.title": { zh: "接单程序 {worker} 10 分钟没连上", en: "Worker {worker} has not been seen for 10 minutes" },
  "card.offline.text": { zh: "交给它的活留着，不放开。它回来后这张卡片自动收尾。", en: "Its runs stay with it. This card closes when it returns." },
  "card.deadlineFailing.title": { zh: "到期项 {due} 连续 {n} 次处理失败", en: "Deadline {due} failed {n} times in a row" },
  "card.deadlineFailing.text": { zh: "它在 {at} 到期。最近一次错误：{error}\n它会接着重试（5 秒起，每次翻倍，最长 1 小时），别的到期项照常处理；哪次成功了，这张卡片自动收尾。中台的输出里有每次失败的详情。", en: "It came due at {at}. Last error: {error}\nIt keeps being retried (from 5 s, doubling, at most every hour); other deadlines go on. This card closes when it succeeds. The hub's output has each failure in detail." },
  "card.done.title": { zh: "「{rule}」做完了", en: "\"{rule}\" is done" },
  "card.cronMissed.title": { zh: "「{rule}」在中台停着时错过了 {n} 次定时", en: "\"{rule}\": {n} missed cron time(s) while the hub was down" },
  "card.cronMissed.text": {
    zh: "第一次错过：{first}。最后一次错过：{last}。中台回来后只补跑了最近的一次：{ran}。",
    en: "First missed: {first}. Last missed: {last}. Only the latest time, {ran}, ran when the hub was back.",
  },
  "card.receipt.title": { zh: "第 {run} 轮的回执读不懂，已作废", en: "The receipt of run {run} could not be read and was voided" },
  // tool plugins (spec tool-plugins.md): manifests, discovery, calls, sandbox, long-lived plugins, conformance
  "tools.manifest.tooLarge": { zh: "manifest 超过 {limit} 字节", en: "the manifest is larger than {limit} bytes" },
  "tools.manifest.utf8": { zh: "manifest 不是 UTF-8 文本", en: "the manifest is not UTF-8 text" },
  "tools.manifest.toml": { zh: "不是合法的 TOML：{error}", en: "not valid TOML: {error}" },
  "tools.manifest.tooDeep": { zh: "{field}：嵌套超过 {limit} 层", en: "{field}: nested deeper than {limit} levels" },
  "tools.manifest.between": { zh: "{field}：应在 {min} 到 {max} 之间", en: "{field}: must be {min} to {max}" },
  "tools.manifest.versionNewer": { zh: "{field}：{version} 比本程序认识的新（认识 1 到 {max}）；请升级 agent-autoloop", en: "{field}: {version} is newer than this host knows (1 to {max}); upgrade agent-autoloop" },
  "tools.manifest.mcpVersion": { zh: "{field}：MCP 插件要 manifest_version = 3 或更高（现在是 {version}）", en: "{field}: an MCP plugin needs manifest_version = 3 or later (got {version})" },
  "tools.manifest.mcpType": { zh: "{field}：[mcp] 只用于 plugin_type = \"mcp\"（这里是 {type}）", en: "{field}: [mcp] is only for plugin_type = \"mcp\" (this is {type})" },
  "tools.manifest.name": { zh: "{field}：只能用字母、数字、_ 和 -，以字母或数字开头", en: "{field}: letters, digits, _ and - only, starting with a letter or digit" },
  "tools.manifest.toolName": { zh: "{field}：只能用字母、数字、_、- 和 .", en: "{field}: letters, digits, _, - and . only" },
  "tools.manifest.duplicateTool": { zh: "{field}：工具 {tool} 写了两次", en: "{field}: tool {tool} is listed twice" },
  "tools.manifest.schema": { zh: "{field}：不是可用的 JSON Schema：{error}", en: "{field}: not a usable JSON Schema: {error}" },
  "tools.manifest.envName": { zh: "{field}：不是合法的环境变量名", en: "{field}: not a valid environment variable name" },
  "tools.manifest.traversal": { zh: "{field}：含 ..，会跑出插件目录", en: "{field}: has a .. segment, which leaves the plugin folder" },
  "tools.manifest.memory": { zh: "{field}：应为 256m 这样的大小（单位 b、k、kb、m、mb、g、gb、t、tb，按 1024 进位），至少 {min}", en: "{field}: must be a size like 256m (units b, k, kb, m, mb, g, gb, t, tb; steps of 1024), at least {min}" },
  "tools.manifest.bind": { zh: "{field}：应为 Docker -v 形式 主机路径:容器内绝对路径[:ro|rw]", en: "{field}: must be in Docker -v form host:/absolute/container/path[:ro|rw]" },
  "tools.manifest.capability": { zh: "{field}：不认识的 Linux capability", en: "{field}: not a known Linux capability" },
  "tools.manifest.bothFiles": { zh: "同一个目录里既有 manifest.toml 又有 plugin-manifest.toml：只留一个", en: "the folder has both manifest.toml and plugin-manifest.toml: keep one" },
  "tools.manifest.read": { zh: "读不了：{error}", en: "cannot be read: {error}" },
  "tools.clash": { zh: "插件 {name}：{winner}（{winnerOrigin}）盖过了 {loser}（{loserOrigin}）", en: "plugin {name}: {winner} ({winnerOrigin}) wins over {loser} ({loserOrigin})" },
  "tools.tooManyFolders": { zh: "{root} 里的插件目录超过 {limit} 个，多出的没有读", en: "{root} has more than {limit} plugin folders; the rest were not read" },
  "tools.call.name": { zh: "工具名应为 <插件>.<工具>：{name}", en: "a tool is named <plugin>.<tool>: {name}" },
  "tools.call.unknownPlugin": { zh: "没有这个工具插件：{plugin}", en: "no such tool plugin: {plugin}" },
  "tools.call.unknownTool": { zh: "插件 {plugin} 没有工具 {tool}", en: "plugin {plugin} has no tool {tool}" },
  "tools.call.rejected": { zh: "插件 {plugin} 的 manifest 不合法：{error}", en: "plugin {plugin} has no valid manifest: {error}" },
  "tools.call.arguments": { zh: "{tool} 的参数不对：{error}", en: "wrong arguments for {tool}: {error}" },
  "tools.call.service": { zh: "插件 {plugin} 是 service 插件，要由工具宿主启动后才能调用", en: "plugin {plugin} is a service plugin: it is called once the tool host has started it" },
  "tools.call.timeout": { zh: "插件 {plugin} 超过 {ms} 毫秒没有回答，已结束它的整个进程组", en: "plugin {plugin} did not answer within {ms} ms; its whole process group was ended" },
  "tools.call.oom": { zh: "插件 {plugin} 超出内存上限 {limit}，被内核结束", en: "plugin {plugin} went over its memory limit {limit} and was killed by the kernel" },
  "tools.call.exited": { zh: "插件 {plugin} 没回答就退出了（{how}）", en: "plugin {plugin} exited before answering ({how})" },
  "tools.call.spawn": { zh: "插件 {plugin} 启动不了：{error}", en: "plugin {plugin} could not be started: {error}" },
  "tools.call.notJson": { zh: "插件 {plugin} 往 stdout 写了不是 JSON 的一行：{line}", en: "plugin {plugin} wrote a line that is not JSON to stdout: {line}" },
  "tools.call.notObject": { zh: "插件 {plugin} 往 stdout 写的不是 JSON-RPC 对象：{line}", en: "plugin {plugin} wrote something that is not a JSON-RPC object to stdout: {line}" },
  "tools.call.wrongId": { zh: "插件 {plugin} 回答的 id 是 {got}，应为 {expected}", en: "plugin {plugin} answered with id {got}, expected {expected}" },
  "tools.call.badResponse": { zh: "插件 {plugin} 的回答不合 JSON-RPC 2.0：{why}", en: "plugin {plugin} sent a response that is not JSON-RPC 2.0: {why}" },
  "tools.call.flood": { zh: "插件 {plugin} 往 stdout 写了超过 {limit} 字节还没回答，已结束它", en: "plugin {plugin} wrote more than {limit} bytes to stdout without answering; it was ended" },
  "tools.call.longLine": { zh: "插件 {plugin} 的一行 stdout 超过 {limit} 字节，已结束它", en: "plugin {plugin} wrote a stdout line longer than {limit} bytes; it was ended" },
  "tools.call.taskId": { zh: "插件 {plugin} 给的 task_id 不能用：应为 {min} 到 {max} 个字母、数字或 . _ ~ -（它是回调唯一的凭据）", en: "plugin {plugin} gave an unusable task_id: it must be {min} to {max} letters, digits or . _ ~ - (it is the callback's only credential)" },
  "tools.call.aborted": { zh: "调用方取消了这次调用", en: "the caller cancelled the call" },
  "tools.call.extraOutput": { zh: "回答之后的输出已忽略", en: "output after the response was ignored" },
  "tools.call.stderrCut": { zh: "stderr 超过 {limit} 字节，其余的不再记录", en: "stderr went over {limit} bytes; the rest is not logged" },
  "tools.call.toolsList": { zh: "插件 {plugin} 的 tools/list 回答不对：{error}", en: "plugin {plugin} answered tools/list wrongly: {error}" },
  "tools.sandbox.noBwrap": { zh: "插件 {plugin} 要求沙箱，但 bubblewrap 不能用（{error}）。装上它：apt-get install bubblewrap", en: "plugin {plugin} asks for a sandbox but bubblewrap cannot run ({error}). Install it: apt-get install bubblewrap" },
  "tools.sandbox.noCgroup": { zh: "插件 {plugin} 要限制 {what}，但没有可用的 cgroup {controller} 控制器（{error}）。以 root 运行并挂载 cgroup v1 的 {controller}，或给本用户委派 cgroup v2 的 {controller} 控制器", en: "plugin {plugin} limits {what} but no cgroup {controller} controller can be used ({error}). Run as root with cgroup v1 {controller} mounted, or delegate the cgroup v2 {controller} controller to this user" },
  "tools.sandbox.bindMissing": { zh: "插件 {plugin} 的 binds 里 {path} 不存在", en: "plugin {plugin} binds {path}, which does not exist" },
  "tools.long.crashLoop": { zh: "插件 {plugin} 在 {seconds} 秒内崩溃了 {crashes} 次，不再重启（改它的 manifest 或重启工具宿主后再试）", en: "plugin {plugin} crashed {crashes} times within {seconds} s and is not restarted again (edit its manifest or restart the tool host to try again)" },
  "tools.long.stopped": { zh: "插件 {plugin} 已停止（restart_policy = never）", en: "plugin {plugin} has stopped (restart_policy = never)" },
  "tools.long.notReady": { zh: "插件 {plugin} 没能在 {ms} 毫秒内就绪：{error}", en: "plugin {plugin} was not ready within {ms} ms: {error}" },
  "tools.long.ended": { zh: "插件 {plugin} 在调用中途结束了：{error}", en: "plugin {plugin} ended during the call: {error}" },
  "tools.long.noResult": { zh: "插件 {plugin} 的 Execute 流没给结果就结束了", en: "plugin {plugin} ended its Execute stream without a result" },
  "tools.long.resultJson": { zh: "插件 {plugin} 的 result_json 不是 JSON", en: "plugin {plugin} sent a result_json that is not JSON" },
  "tools.long.notAllowed": { zh: "插件 {plugin} 的 [mcp] tools_allowlist 不放行工具 {tool}", en: "plugin {plugin}'s [mcp] tools_allowlist does not export tool {tool}" },
  "tools.doctor.clash": { zh: "同名插件", en: "name clash" },
  "tools.doctor.entry": { zh: "入口程序找得到", en: "the entry point is found" },
  "tools.doctor.noCommand": { zh: "找不到 {command}（相对路径从插件目录算，否则在 PATH 里找）", en: "{command} is not found (a relative path counts from the plugin folder, a name is looked up in PATH)" },
  "tools.doctor.sandbox": { zh: "要求的沙箱在本机能建", en: "the sandbox it asks for can be made here" },
  "tools.conf.manifest": { zh: "manifest 可读、合法", en: "the manifest reads and is valid" },
  "tools.conf.tools": { zh: "工具清单", en: "tool list" },
  "tools.conf.call": { zh: "一次正常调用", en: "a good call" },
  "tools.conf.badCall": { zh: "一次对不存在的工具的调用", en: "a call of a tool that does not exist" },
  "tools.conf.badArgs": { zh: "不合 schema 的参数被宿主拒绝，插件没有启动", en: "arguments failing the schema are refused by the host; the plugin is not started" },
  "tools.conf.idEcho": { zh: "回答带回请求的 id", en: "the response echoes the request's id" },
  "tools.conf.stdout": { zh: "stdout 只有 JSON-RPC", en: "stdout carries only JSON-RPC" },
  "tools.conf.exit": { zh: "输入结束后自己退出", en: "exits on its own when its input ends" },
  "tools.conf.timeout": { zh: "超时后整个进程组被结束", en: "a timeout ends its whole process group" },
  // the worker's own log lines and run errors
  "worker.fileFault": { zh: "接单程序 {name}：{error}。先不领新活（手上的照常盯着、照常报心跳），{seconds} 秒后再试", en: "worker {name}: {error}. Not claiming new runs (the runs in hand are watched and reported as usual); trying again in {seconds} s" },
  "worker.fileRecovered": { zh: "接单程序 {name}：文件又能写了，继续领活", en: "worker {name}: its files can be written again; claiming goes on" },
  "worker.runFault": { zh: "第 {run} 轮：{error}。{seconds} 秒后再试", en: "run {run}: {error}. Trying again in {seconds} s" },
  "worker.runGaveUp": { zh: "接单程序没法接着做这一轮：{error}", en: "the worker could not go on with this run: {error}" },
  "worker.unreadableJob": { zh: "接单程序 {name}：{file} 读不懂（{error}），这一轮不接着盯，留给你处理", en: "worker {name}: {file} cannot be read ({error}); that run is not picked up and is left for you" },
  "worker.outputSlow": { zh: "接单程序 {name}：读 {dir} 的输出超过 {seconds} 秒，重启读输出的线程", en: "worker {name}: reading the output of {dir} took over {seconds} s; the output thread is restarted" },
  "worker.outputThread": { zh: "接单程序 {name}：读输出的线程出错：{error}", en: "worker {name}: the output thread failed: {error}" },
  "worker.outputFailed": { zh: "读不了 Agent 的输出（读输出的线程出错或超过 {seconds} 秒没答）", en: "could not read the agent's output (the output thread failed or did not answer within {seconds} s)" },
  "sandbox.cwdReadOnly": { zh: "工作目录 {cwd} 在 {folder} 里面，沙盒把那里设成只读（中台要从那里运行代码或程序）：换一个目录，或给 Agent {agent} 设 \"sandbox\": false", en: "cwd {cwd} lies inside {folder}, which the sandbox keeps read-only because the hub runs code or programs from there: choose another folder, or set \"sandbox\": false on agent {agent}" },
  "output.leftOut": { zh: "[……此处略去 {bytes} 字节输出……]", en: "[… {bytes} bytes of output left out here …]" },
  "card.needsYou.title": { zh: "第 {run} 轮说待你处理，但没有提问", en: "Run {run} says it needs you but asked no question" },
  "card.question.title": { zh: "第 {run} 轮以问句结束，但没有向你提问", en: "Run {run} ended with a question but asked you nothing" },
  "receipt.needsYouNoAsk": {
    zh: "第一行说要本人处理，但回执里没有 ask（给本人的问题要写成回执里的 ask，否则没人看得到）",
    en: "the first line says the owner must act, but the receipt has no ask (a question for the owner must be an ask in the receipt, or nobody sees it)",
  },
  "receipt.questionNoAsk": {
    zh: "消息以问句结束，但回执里没有 ask（给本人的问题要写成回执里的 ask，否则没人看得到；不是问本人的，就以结论结尾）",
    en: "the message ends with a question, but the receipt has no ask (a question for the owner must be an ask in the receipt, or nobody sees it; if it is not for the owner, end with your conclusion)",
  },
  // CLI
  "cli.init.created": { zh: "已创建 {home}", en: "created {home}" },
  "cli.init.exists": { zh: "{home} 已经初始化过，什么都没改", en: "{home} is already set up; nothing changed" },
  "cli.hubDown": { zh: "连不上中台 {url}：{error}。先运行 agent-autoloop serve", en: "cannot reach the hub at {url}: {error}. Start it with agent-autoloop serve" },
  "cli.unreachable": { zh: "连不上中台 {url}：{error}", en: "cannot reach the hub at {url}: {error}" },
  "cli.otherHome": { zh: "{url} 上的中台属于另一个目录（{theirs}），不是这个目录（{ours}，{home}）；什么都没发给它。把 AGENT_AUTOLOOP_URL 设成这个目录的中台，或把 AGENT_AUTOLOOP_HOME 设成那个中台的目录", en: "the hub at {url} serves another home ({theirs}), not this one ({ours}, {home}); nothing was sent to it. Set AGENT_AUTOLOOP_URL to this home's hub, or AGENT_AUTOLOOP_HOME to that hub's home" },
  "cli.noHomeId": { zh: "{url} 上的服务没说它属于哪个目录：它不是这个目录（{ours}，{home}）的中台，或是有目录编号以前的中台（重启它）；什么都没发给它", en: "the server at {url} does not say which home it serves, so it is not this home's hub ({ours}, {home}), or a hub from before home ids (restart it); nothing was sent to it" },
  "cli.lockedNoHub": { zh: "有个进程占着这个目录（hub.pid 里的进程 {pid}），却没有这个目录的中台应答（{reason}）；什么都没写", en: "a process holds this home (pid {pid} in hub.pid) and no hub of this home answers ({reason}); nothing was written" },
  "cli.keysBusy": { zh: "agent-autoloop key new 或 key remove（进程 {pid}）正在改这个目录的密钥；什么都没写：稍等再试", en: "agent-autoloop key new or key remove (pid {pid}) is changing this home's keys right now; nothing was written: try again in a moment" },
  "cli.hubStarting": { zh: "这个目录的中台（进程 {pid}）正在启动，还没报出地址：稍等再试", en: "the hub of this home (pid {pid}) is starting and has not said its address yet: try again in a moment" },
  "cli.hubStartingUnwritten": { zh: "这个目录的中台（进程 {pid}）正在启动，还没报出地址；什么都没写：稍等再试", en: "the hub of this home (pid {pid}) is starting and has not said its address yet; nothing was written: try again in a moment" },
  "cli.noHubPortZero": { zh: "这个目录没有中台在运行：用 agent-autoloop serve 启动（config.json 的 listen 端口是 0，中台的地址要等它运行起来才知道）", en: "no hub runs on this home: start it with agent-autoloop serve (config.json's listen has port 0, so the hub's address is known only once it runs)" },
  "cli.noHome": { zh: "{home} 还没初始化，先运行 agent-autoloop init", en: "{home} is not set up yet; run agent-autoloop init first" },
  "cli.noOwner": { zh: "config.json 里没有本人密钥（owner）", en: "config.json has no owner key" },
  "cli.check.ok": { zh: "{file} 没问题：{rules} 条规则，{agents} 个 Agent，{sources} 个来源，{channels} 个通道，{elsewhere} 个 elsewhere 任务", en: "{file} is valid: {rules} rules, {agents} agents, {sources} sources, {channels} channels, {elsewhere} elsewhere tasks" },
  "cli.unreleased": { zh: "未发布", en: "unreleased" },
  "cli.check.noFile": { zh: "{error}。先运行 agent-autoloop init，或指明文件：agent-autoloop check <文件>", en: "{error}. Run agent-autoloop init first, or name a file: agent-autoloop check <file>" },
  "doctor.hubUp": { zh: "中台：在线，{url}", en: "hub: up at {url}" },
  "doctor.hubDown": { zh: "中台：没在运行（{reason}）；用 agent-autoloop serve 启动它", en: "hub: not running ({reason}); start it with agent-autoloop serve" },
  "doctor.hubOther": { zh: "中台：{reason}", en: "hub: {reason}" },
  // status: channels, one rule's runs, pauses
  "status.channels": { zh: "通道：", en: "Channels:" },
  "status.lastPoll": { zh: "最近轮询 {at}", en: "last poll {at}" },
  "status.neverPolled": { zh: "从没轮询过", en: "never polled" },
  "status.cardsWaiting": { zh: "等着送的卡片：{n}", en: "cards waiting: {n}" },
  "status.channelNotHere": { zh: "这台电脑上没有程序跑 {channel}：config.json 里没有通道 {channel}（在 \"channels\" 下加上它和它的密钥、选项，再重启 serve）", en: "nothing on this computer runs {channel}: config.json has no channel {channel} (add it under \"channels\" with its key and options, then restart serve)" },
  "status.channelNotStarted": { zh: "config.json 里有通道 {channel}，但正在运行的 serve 没启动它：重启 serve（serve 只在启动时启动 config.json 里的通道；rules.json 会自己重新载入）", en: "config.json has channel {channel}, but the running serve has not started it: restart serve (it starts the channels of config.json when it starts; rules.json reloads by itself)" },
  "status.waitsForNeverPolled": { zh: "! {channel}：在等一个从没轮询过的通道（见「通道」）", en: "! {channel}: waiting for a channel that has never polled (see Channels)" },
  "status.runsOfRule": { zh: "「{rule}」最近的轮次：", en: "Recent runs of {rule}:" },
  "status.olderRunsOfRule": { zh: "更早的：agent-autoloop status --rule {rule} --before {run}", en: "older: agent-autoloop status --rule {rule} --before {run}" },
  "status.pausedUntil": { zh: "暂停到 {at}", en: "paused until {at}" },
  "hub.internalError": { zh: "处理 {kind} 时出了内部错误：{what}\n{stack}", en: "internal error in {kind}: {what}\n{stack}" },
  "hub.timerStuck": { zh: "到期时间已过，处理后什么都没变；{seconds} 秒后再试", en: "timer: a past deadline changed nothing; trying again in {seconds} s" },
  "serve.listening": { zh: "listening on {url}", en: "listening on {url}" },
  "presence.worker": { zh: "接单程序 {name}", en: "worker {name}" },
  "presence.channel": { zh: "通道 {name}", en: "channel {name}" },
  "presence.connected": { zh: "{part} 连上了", en: "{part} connected" },
  "presence.silent": { zh: "{part} 没动静了：{seconds} 秒没来轮询", en: "{part} went silent: no poll for {seconds} s" },
  "rules.noSuchFile": { zh: "没有这个文件", en: "no such file" },
  "rules.noPermission": { zh: "没有权限读", en: "permission denied" },
  "rules.notFile": { zh: "{file}：不是普通文件（{kind}）", en: "{file}: not a regular file ({kind})" },
  "rules.kind.fifo": { zh: "是个 FIFO", en: "a FIFO" },
  "rules.kind.directory": { zh: "是个目录", en: "a directory" },
  "rules.kind.device": { zh: "是个设备", en: "a device" },
  "rules.kind.socket": { zh: "是个套接字", en: "a socket" },
  "rules.kind.other": { zh: "别的类型", en: "another kind of file" },
  "rules.tooLarge": { zh: "{file}：{size} 字节，超过 {mib} MiB（{limit} 字节）", en: "{file}: {size} bytes, larger than {mib} MiB ({limit} bytes)" },
  "rules.unexpected": { zh: "{file}：读规则时出错：{error}", en: "{file}: reading the rules failed: {error}" },
  "serve.noRules": { zh: "读不到规则 {file}：{error}。从没载入过规则的中台不启动。", en: "cannot load rules {file}: {error}. A hub that never loaded rules does not start." },
  // texts the protocol fixes or the hub puts into data (fixedMessageIds): written in Chinese on every machine
  "control.paused": { zh: "规则「{name}」暂停中，先恢复再手动运行", en: "rule \"{name}\" is paused: resume it before running it by hand" },
  "rejected.noCard": { zh: "没有这张卡片：{id}", en: "no such card: {id}" },
  "rejected.closed": { zh: "这张卡片已经结案", en: "this card is already closed" },
  // the kinds of keys, as refusals name them
  "key.kindName.source": { zh: "来源", en: "source" },
  "key.kindName.worker": { zh: "接单程序", en: "worker" },
  "key.kindName.channel": { zh: "通道", en: "channel" },
  "key.kindName.owner": { zh: "本人", en: "owner" },
  // rules.json checks (kernel/rules.ts): "{path}: {message}", with the line and column added by whoever reads the file
  "rulesJson.at": { zh: "{path}：{message}", en: "{path}: {message}" },
  "rulesJson.tooLarge": { zh: "文件超过 {mib} MiB（{limit} 字节）", en: "the file is larger than {mib} MiB ({limit} bytes)" },
  "rulesJson.tooDeep": { zh: "JSON：对象和数组套了超过 {max} 层", en: "JSON: more than {max} objects and arrays inside one another" },
  "rulesJson.syntax": { zh: "JSON 写错了：{code}", en: "JSON: {code}" },
  "rulesJson.notObject": { zh: "文件里要是一个 JSON 对象", en: "the file must hold one JSON object" },
  "rulesJson.tooMany.items": { zh: "最多 {max} 项", en: "at most {max} items" },
  "rulesJson.tooMany.sources": { zh: "最多 {max} 个来源", en: "at most {max} sources" },
  "rulesJson.tooMany.agents": { zh: "最多 {max} 个 Agent", en: "at most {max} agents" },
  "rulesJson.tooMany.channels": { zh: "最多 {max} 个通道", en: "at most {max} channels" },
  "rulesJson.tooMany.rules": { zh: "最多 {max} 条规则", en: "at most {max} rules" },
  "rulesJson.tooMany.tasks": { zh: "最多 {max} 个任务", en: "at most {max} tasks" },
  "rulesJson.tooMany.names": { zh: "最多 {max} 个名字", en: "at most {max} names" },
  "rulesJson.twice": { zh: "写了两次", en: "given twice" },
  "rulesJson.required": { zh: "必填", en: "required" },
  "rulesJson.string": { zh: "应为字符串", en: "must be a string" },
  "rulesJson.empty": { zh: "不能为空", en: "must not be empty" },
  "rulesJson.control": { zh: "不能有控制字符", en: "no control characters" },
  "rulesJson.maxChars": { zh: "最多 {max} 个字", en: "at most {max} characters" },
  "rulesJson.strings": { zh: "应为字符串数组", en: "must be an array of strings" },
  "rulesJson.envName": { zh: "应为环境变量名（字母、数字和 _，不以数字开头，最多 100 个），或 GH_* 这样的前缀", en: "a variable name (letters, digits and _, not starting with a digit, at most 100) or a prefix such as GH_*" },
  "rulesJson.envOwn": { zh: "AGENT_AUTOLOOP_ 开头的变量从不交给 Agent", en: "AGENT_AUTOLOOP_ variables never reach agents" },
  "rulesJson.unknownField": { zh: "不认识的字段（认识的有：{known}）", en: "unknown field (known: {known})" },
  "rulesJson.dotName": { zh: "\".\" 和 \"..\" 不能当名字（它们放不进 URL）", en: "\".\" and \"..\" cannot be names (they cannot stand in a URL)" },
  "rulesJson.name": { zh: "名字只能用字母、数字和 _ . -（最多 100 个）", en: "names use letters, digits, _ . - (at most 100)" },
  "rulesJson.timezone": { zh: "不认识的时区 {timezone}", en: "unknown time zone {timezone}" },
  "rulesJson.object": { zh: "应为对象", en: "must be an object" },
  "rulesJson.scheduleSource": { zh: "\"{name}\" 是定时规则的来源，不能声明", en: "\"{name}\" is the source of cron rules and cannot be declared" },
  "rulesJson.elsewhereSource": { zh: "\"{name}\" 是 elsewhere 任务的来源，不能声明", en: "\"{name}\" is the source of elsewhere tasks and cannot be declared" },
  "rulesJson.pluginName": { zh: "插件名只能用 a-z、0-9 和 -", en: "plugin names use a-z, 0-9 and -" },
  "rulesJson.access": { zh: "只能是 read、edit 或 full", en: "must be read, edit or full" },
  "rulesJson.commandFor": { zh: "use 是 \"{use}\" 时必填", en: "required for use \"{use}\"" },
  "rulesJson.boolean": { zh: "只能是 true 或 false", en: "must be true or false" },
  "rulesJson.array": { zh: "应为数组", en: "must be an array" },
  "rulesJson.ruleTaken": { zh: "已经有一条规则叫 \"{name}\"", en: "another rule is already named \"{name}\"" },
  "rulesJson.when": { zh: "必填：{\"source\", \"types\"} 或 {\"cron\"}", en: "required: {\"source\", \"types\"} or {\"cron\"}" },
  "rulesJson.cronOnly": { zh: "定时规则不写 source 和 types", en: "a cron rule has no source or types" },
  "rulesJson.cron": { zh: "不是 cron 表达式：{cron}", en: "not a cron expression: {cron}" },
  "rulesJson.noSource": { zh: "sources 里没有来源 \"{name}\"", en: "no source \"{name}\" in sources" },
  "rulesJson.noAgent": { zh: "agents 里没有 Agent \"{name}\"", en: "no agent \"{name}\" in agents" },
  "rulesJson.parallel": { zh: "应为 ≥ 1 的整数", en: "must be a whole number ≥ 1" },
  "rulesJson.tell": { zh: "只能是 always、needed 或 never", en: "must be always, needed or never" },
  "rulesJson.emits": { zh: "应为 {\"source\", \"types\"}", en: "must be {\"source\", \"types\"}" },
  "rulesJson.noChannel": { zh: "channels 里没有通道 \"{name}\"", en: "no channel \"{name}\" in channels" },
  "rulesJson.taskTaken": { zh: "已经有规则或任务叫 \"{name}\"", en: "a rule or task is already named \"{name}\"" },
  "rulesJson.cwdNeedsTo": { zh: "写了 cwd 的任务要写 to", en: "a task with cwd needs to" },
  "rulesJson.cwdNeedsWhat": { zh: "写了 cwd 的任务要写 skill 或 prompt", en: "a task with cwd needs skill or prompt" },
  "rulesJson.sameSecret.source": { zh: "和来源 \"{other}\" 对应同一个 secrets.env 变量（{env}）；改掉其中一个名字", en: "same secrets.env name ({env}) as source \"{other}\"; rename one" },
  "rulesJson.sameSecret.channel": { zh: "和通道 \"{other}\" 对应同一个 secrets.env 变量（{env}）；改掉其中一个名字", en: "same secrets.env name ({env}) as channel \"{other}\"; rename one" },
  "rulesJson.budget": { zh: "应为 {\"cost\", \"tokens\", \"per\"}", en: "must be {\"cost\", \"tokens\", \"per\"}" },
  "rulesJson.positive": { zh: "应为大于 0 的数", en: "must be a number > 0" },
  "rulesJson.budgetNeeds": { zh: "要写 cost 或 tokens", en: "needs cost or tokens" },
  "rulesJson.per": { zh: "只能是 day 或 week", en: "must be day or week" },
  "rulesJson.tooMany.approvals": { zh: "最多 {max} 条审批规则", en: "at most {max} approval rules" },
  "rulesJson.toolPattern": { zh: "应为 <插件>.<工具>，<工具> 里可以用 * 代表任意一串字符（如 file-ops.*）", en: "must be <plugin>.<tool>, with * for any run of characters in the tool's part (such as file-ops.*)" },
  "rulesJson.toolPlugin": { zh: "工具插件名只能用字母、数字、_ 和 -，以字母或数字开头，最多 {max} 个", en: "tool plugin names use letters, digits, _ and -, starting with a letter or digit (at most {max})" },
  "rulesJson.approvalTool": { zh: "应为插件 \"{plugin}\" 的一个工具：{plugin}.<工具>（不能用 *）", en: "must be a tool of plugin \"{plugin}\": {plugin}.<tool> (no *)" },
  "rulesJson.approvalMode": { zh: "只能是 auto、prompt 或 deny", en: "must be auto, prompt or deny" },
  "rulesJson.approvalTwice": { zh: "和 approvals[{index}] 的插件、工具相同", en: "the same plugin and tool as approvals[{index}]" },
  "rulesJson.approvalWait": { zh: "应为 0 到 {max} 的整数（秒）", en: "must be a whole number of seconds from 0 to {max}" },
  // `agent-autoloop --help`: commander's headings and descriptions
  "cli.help.usage": { zh: "用法：", en: "Usage:" },
  "cli.help.options": { zh: "选项：", en: "Options:" },
  "cli.help.commands": { zh: "命令：", en: "Commands:" },
  "cli.help.arguments": { zh: "参数：", en: "Arguments:" },
  "cli.help.globalOptions": { zh: "全局选项：", en: "Global Options:" },
  "cli.desc.program": { zh: "自己架设的中台：把发生的事变成编程 Agent 的一轮轮工作，只把需要人的事带到你面前。", en: "A self-hosted hub that turns events into coding-agent runs and brings you only what needs a human." },
  "cli.desc.version": { zh: "显示版本号", en: "output the version number" },
  "cli.desc.help": { zh: "显示命令的帮助", en: "display help for command" },
  "cli.desc.init": { zh: "创建主目录（rules.json、config.json、密钥）", en: "create the home directory (rules.json, config.json, keys)" },
  "cli.desc.serve": { zh: "在一个进程里运行中台、本机的接单程序和通道", en: "run the hub, the local worker and the channels in one process" },
  "cli.desc.listen": { zh: "监听地址（端口写 0 就挑一个空闲端口）", en: "listen address (port 0 picks a free port)" },
  "cli.desc.status": { zh: "一眼看清卡片、轮次、规则、接单程序和没有规则接的事件", en: "cards, runs, rules, workers and unrouted events at a glance" },
  "cli.desc.statusJson": { zh: "原样打印 /v1/state 的回答", en: "print the raw /v1/state answer" },
  "cli.desc.before": { zh: "更早的轮次：这一轮之前的", en: "older runs, before this run id" },
  "cli.desc.statusRule": { zh: "只看这条规则的轮次", en: "only this rule's runs" },
  "cli.desc.answer": { zh: "回答卡片：选项的编号（0、1……），或用 --text", en: "answer a card: the number of an option (0, 1, …), or --text" },
  "cli.desc.text": { zh: "用自己的话回答", en: "an answer in your own words" },
  "cli.desc.resolve": { zh: "结案：不用再决定了", en: "close a card: no decision needed any more" },
  "cli.desc.stop": { zh: "停止一轮", en: "stop a run" },
  "cli.desc.pause": { zh: "暂停规则：跳过定时，不接事件，排队的轮次等着", en: "pause a rule: cron times are skipped, events are not taken, queued runs wait" },
  "cli.desc.reason": { zh: "原因", en: "why" },
  "cli.desc.until": { zh: "到这个时间自动恢复（带时区的 ISO 时间，比如 2026-11-07T09:00:00+08:00）", en: "resume by itself then (ISO time with a zone, e.g. 2026-11-07T09:00:00+08:00)" },
  "cli.desc.resume": { zh: "恢复暂停的规则（错过的定时不补跑）", en: "resume a paused rule (missed cron times are not made up)" },
  "cli.desc.run": { zh: "立即运行一条规则，走正常派活", en: "run a rule now, through normal dispatch" },
  "cli.desc.subject": { zh: "对象（parallel 规则的事项）", en: "the subject (the lane of a parallel rule)" },
  "cli.desc.runReason": { zh: "原因（事件的 detail）", en: "why (the event's detail)" },
  "cli.desc.why": { zh: "从事实日志看一轮是怎么来的、做了什么", en: "how a run came about and what it did, from the fact log" },
  "cli.desc.whyJson": { zh: "原样打印事实", en: "print the raw facts" },
  "cli.desc.add": { zh: "安装插件：把 git 仓库克隆进、或把本机的目录复制进 plugins 目录（不跑安装脚本，不自动更新）", en: "install a plugin: clone a git repository, or copy a local folder, into the plugins folder (no install scripts, no updates)" },
  "cli.desc.replace": { zh: "内置插件已经用了这个名字也照样安装（之后用它顶替内置的）", en: "install it even when a built-in plugin has that name (it is then used in place of the built-in one)" },
  "cli.desc.doctor": { zh: "检查本机接单程序的 Agent 能不能跑，并说下一步该做什么", en: "check that the agents of this computer's worker can run, and say what to do next" },
  "cli.desc.conformance": { zh: "通过真实 HTTP 按协议检查一个测试用的中台（会写入事件和卡片）", en: "check a hub for testing against the protocol over real HTTP (writes events and cards)" },
  "cli.desc.config": { zh: "JSON：{ \"keys\": { \"source\", \"worker\", \"channel\", \"owner\" }, \"eventType\", \"answerer\" }", en: "JSON: { \"keys\": { \"source\", \"worker\", \"channel\", \"owner\" }, \"eventType\", \"answerer\" }" },
  "cli.desc.mcp": { zh: "stdio 上的 MCP 服务，它的工具调用这个中台（status、why、answer、resolve、stop、emit、tell）", en: "a stdio MCP server whose tools call this hub (status, why, answer, resolve, stop, emit, tell)" },
  "cli.desc.key": { zh: "创建或删除访问密钥", en: "create or remove access keys" },
  "cli.desc.keyNew": { zh: "创建一把密钥并打印出来（顶替同种类、同名字的旧密钥）", en: "create a key and print it (replaces an earlier key of the same kind and name)" },
  "cli.desc.keyRemove": { zh: "删除密钥：用它的长轮询和事件流立即结束", en: "remove a key: its long polls and streams end at once" },
  "cli.desc.check": { zh: "校验规则文件，不碰中台（默认 rules.json）", en: "validate a rules file without touching the hub (default: rules.json)" },
  "cli.arg.card": { zh: "卡片编号", en: "card id" },
  "cli.arg.choice": { zh: "选项编号", en: "option number" },
  "cli.arg.run": { zh: "轮次编号", en: "run id" },
  "cli.arg.rule": { zh: "规则名", en: "rule name" },
  "cli.arg.repo": { zh: "git 地址、本机的 git 仓库，或本机的目录（复制时不带 .git 和 node_modules）", en: "a git URL, a local git repository, or a local folder (copied without .git and node_modules)" },
  "cli.arg.url": { zh: "中台的地址", en: "the hub's URL" },
  "cli.arg.kind": { zh: "种类：source | worker | channel | owner", en: "source | worker | channel | owner" },
  "cli.arg.keyName": { zh: "rules.json 里的名字（来源、接单程序或通道的名字）", en: "the name in rules.json (source, worker or channel name)" },
  "cli.arg.itsName": { zh: "它的名字", en: "its name" },
  "cli.arg.file": { zh: "规则文件", en: "rules file" },
  // commander's own errors, as it words them (localize shows them in the user's language)
  "cli.cmd.unknownCommand": { zh: "错误：没有「{name}」这个命令", en: "error: unknown command '{name}'" },
  "cli.cmd.unknownOption": { zh: "错误：没有「{name}」这个选项", en: "error: unknown option '{name}'" },
  "cli.cmd.missingArgument": { zh: "错误：缺少必填参数「{name}」", en: "error: missing required argument '{name}'" },
  "cli.cmd.optionArgument": { zh: "错误：选项「{flags}」缺少值", en: "error: option '{flags}' argument missing" },
  "cli.cmd.requiredOption": { zh: "错误：没有写必填选项「{flags}」", en: "error: required option '{flags}' not specified" },
  "cli.cmd.tooManyOne": { zh: "错误：「{name}」的参数太多：只要 1 个，给了 {got} 个。", en: "error: too many arguments for '{name}'. Expected 1 argument but got {got}." },
  "cli.cmd.tooMany": { zh: "错误：「{name}」的参数太多：只要 {expected} 个，给了 {got} 个。", en: "error: too many arguments for '{name}'. Expected {expected} arguments but got {got}." },
  "cli.cmd.didYouMean": { zh: "（是不是想用 {name}？）", en: "(Did you mean {name}?)" },
  "cli.cmd.didYouMeanOne": { zh: "（是不是想用其中一个：{names}？）", en: "(Did you mean one of {names}?)" },
  // what the commands print
  "cli.answered": { zh: "卡片 {card}：{state} — {title}", en: "card {card}: {state} — {title}" },
  "cli.resolved": { zh: "卡片 {card}：已结案", en: "card {card}: closed" },
  "cli.resolvedAlready": { zh: "卡片 {card}：早就结案了", en: "card {card}: already closed" },
  "cli.stopped": { zh: "第 {run} 轮：{state}", en: "run {run}: {state}" },
  "cli.paused": { zh: "{rule}：已暂停", en: "{rule}: paused" },
  "cli.pausedUntil": { zh: "{rule}：已暂停，到 {until} 自动恢复", en: "{rule}: paused until {until}" },
  "cli.pausedAlready": { zh: "{rule}：早就暂停了", en: "{rule}: already paused" },
  "cli.pausedAlreadyUntil": { zh: "{rule}：早就暂停了，到 {until} 自动恢复", en: "{rule}: already paused until {until}" },
  "cli.resumed": { zh: "{rule}：已恢复", en: "{rule}: resumed" },
  "cli.notPaused": { zh: "{rule}：本来就没暂停", en: "{rule}: was not paused" },
  "cli.ran": { zh: "{rule}：事件 {event}，第 {run} 轮", en: "{rule}: event {event}, run {run}" },
  "cli.keyRemoved": { zh: "已删除", en: "removed" },
  "cli.noSuchKey": { zh: "没有这把密钥", en: "no such key" },
  "cli.holder.worker": { zh: "接单程序 {name}", en: "worker {name}" },
  "cli.holder.channel": { zh: "通道 {name}", en: "channel {name}" },
  "cli.doctor.ok": { zh: "正常 {line}", en: "ok   {line}" },
  "cli.doctor.fix": { zh: "待修 {line}", en: "FIX  {line}" },
  "cli.conformance.pass": { zh: "正常 {check}", en: "ok   {check}" },
  "cli.conformance.fail": { zh: "失败 {check}", en: "FAIL {check}" },
  "cli.conformance.summary": { zh: "{passed} 项通过，{failed} 项失败", en: "{passed} passed, {failed} failed" },
  "cli.conformance.config": { zh: "{file}：要写 keys.source、keys.worker、keys.channel、keys.owner、eventType 和 answerer", en: "{file}: needs keys.source, keys.worker, keys.channel, keys.owner, eventType and answerer" },
  "cli.failed": { zh: "agent-autoloop：{error}", en: "agent-autoloop: {error}" },
  // `agent-autoloop status`
  "status.header": { zh: "中台 {url} · 规则 v{version} · {timezone} · {now}", en: "hub {url} · rules v{version} · {timezone} · {now}" },
  "status.cards": { zh: "待处理的卡片（{n}）：", en: "Cards waiting for you ({n}):" },
  "status.none": { zh: "（无）", en: "(none)" },
  "status.recommended": { zh: "← 推荐", en: "← recommended" },
  "status.deliveryGaveUp": { zh: "! {channel}：放弃了（{failures} 次）：{error}", en: "! {channel}: gave up ({failures}×): {error}" },
  "status.deliveryFailing": { zh: "! {channel}：没送达（{failures} 次）：{error}", en: "! {channel}: not delivered ({failures}×): {error}" },
  "status.answerHint": { zh: "→ 回答：agent-autoloop answer {card} {choice}", en: "→ agent-autoloop answer {card} {choice}" },
  "status.tokens": { zh: "{n} Token", en: "{n} tokens" },
  "status.active": { zh: "进行中的轮次（{n}）：", en: "Active runs ({n}):" },
  "status.retryAt": { zh: "{at} 重试", en: "retry at {at}" },
  "status.since": { zh: "自 {at}", en: "since {at}" },
  "status.failures": { zh: "连续失败 {n} 次", en: "failures {n}" },
  "status.runs": { zh: "最近的轮次：", en: "Recent runs:" },
  "status.attempt": { zh: "（第 {n} 次执行）", en: "(attempt {n})" },
  "status.rules": { zh: "规则：", en: "Rules:" },
  "status.queued": { zh: "排队 {n}", en: "queued {n}" },
  "status.running": { zh: "在跑 {n}", en: "running {n}" },
  "status.paused": { zh: "暂停中", en: "paused" },
  "status.next": { zh: "下次 {at}", en: "next {at}" },
  "status.cronSkipped": { zh: "跳过 {n} 次（最近 {last}）", en: "skipped {n}× (last {last})" },
  "status.elsewhere": { zh: "别处的定时任务：", en: "Elsewhere tasks:" },
  "status.pausedRules": { zh: "暂停中的规则：", en: "Paused rules:" },
  "status.until": { zh: "到 {at}", en: "until {at}" },
  "status.workers": { zh: "接单程序：", en: "Workers:" },
  "status.online": { zh: "在线", en: "online" },
  "status.offline": { zh: "离线", en: "offline" },
  "status.timers": { zh: "等待中的复查：", en: "Timers waiting:" },
  "status.skipped": { zh: "因暂停没接的事件：", en: "Events skipped while paused:" },
  "status.unrouted": { zh: "没有规则接的事件（{n}）：", en: "Unrouted events ({n}):" },
  "status.spending": { zh: "用量：", en: "Spending:" },
  "status.today": { zh: "今天", en: "today" },
  "status.week": { zh: "7 天", en: "7 days" },
  "status.spent": { zh: "{label}：{runs} 轮 · {tokens} Token · ${cost}", en: "{label}: {runs} runs · {tokens} tokens · ${cost}" },
  "status.noTokens": { zh: "{n} 轮没报 Token", en: "{n} without token counts" },
  "status.noCost": { zh: "{n} 轮没报费用", en: "{n} without cost" },
  // `agent-autoloop why`
  "why.rules": { zh: "规则 v{version}", en: "rules v{version}" },
  "why.event": { zh: "事件 {event}", en: "event {event}" },
  "why.followUp": { zh: "接着的一轮 #{run}", en: "follow-up run #{run}" },
  "why.card": { zh: "卡片 #{card} {kind}：{title}", en: "card #{card} {kind}: {title}" },
  "why.delivered": { zh: "卡片 #{card} 已送达 {channel}（{ref}）", en: "card #{card} delivered to {channel} ({ref})" },
  "why.answered": { zh: "卡片 #{card} 已回答：{answer}（{by}）", en: "card #{card} answered: {answer} (by {by})" },
  "why.later": { zh: "到期复查 {key}，{at}", en: "later {key} at {at}" },
  "why.new": { zh: "新", en: "new" },
  "why.claimedBy": { zh: "由 {worker} 领取 · 第 {attempt} 次执行 · 会话 {session}", en: "by {worker} · attempt {attempt} · session {session}" },
  "why.session": { zh: "会话 {session}", en: "session {session}" },
  "why.usage": { zh: "用量 {usage}", en: "usage {usage}" },
  "why.retry": { zh: "{error} · {at} 重试", en: "{error} · retry at {at}" },
  "why.failed": { zh: "没跑成", en: "failed" },
  // `agent-autoloop doctor`
  "doctor.rulesMissing": { zh: "{error} — 先运行 agent-autoloop init", en: "{error} — run agent-autoloop init" },
  "doctor.rulesError": { zh: "{error} — 改好它；agent-autoloop check 说的一样", en: "{error} — fix it; agent-autoloop check shows the same" },
  "doctor.rules": { zh: "rules.json：{rules} 条规则，{agents} 个 Agent", en: "rules.json: {rules} rules, {agents} agents" },
  "doctor.noWorker": { zh: "config.json 里没有本机的接单程序：Agent 在别处的接单程序上跑", en: "config.json has no local worker: agents run on workers elsewhere" },
  "doctor.elsewhere": { zh: "Agent {agent}：在接单程序 {worker} 上跑，不在这台电脑", en: "agent {agent}: runs on worker {worker}, not here" },
  "doctor.noPlugin": { zh: "Agent {agent}：没有 Agent 插件 \"{use}\" — 用 agent-autoloop add <git 地址> 装上，或改用 \"command\"", en: "agent {agent}: no agent plugin \"{use}\" — install it with agent-autoloop add <git url>, or use \"command\"" },
  "doctor.noProgram": { zh: "Agent {agent}：PATH 里找不到程序 {program} — 装上它，或把 \"program\" 写成完整路径", en: "agent {agent}: program {program} is not on PATH — install it, or set \"program\" to its full path" },
  "doctor.program": { zh: "Agent {agent}：{program}", en: "agent {agent}: {program}" },
  "doctor.programVersion": { zh: "Agent {agent}：{program}（{version}）", en: "agent {agent}: {program} ({version})" },
  "doctor.next": { zh: "Agent {agent}：{next}", en: "agent {agent}: {next}" },
  "doctor.plugin": { zh: "Agent {agent}：插件 {use}", en: "agent {agent}: plugin {use}" },
  "doctor.pluginFails": { zh: "Agent {agent}：插件 {use} 加载不了：{error}", en: "agent {agent}: plugin {use} does not load: {error}" },
  "doctor.channelNotHere": { zh: "通道 {channel}：不由这台电脑的 serve 运行（config.json 里没有它）", en: "channel {channel}: not run by this computer's serve (no entry in config.json)" },
  "doctor.noChannelPlugin": { zh: "通道 {channel}：没有通道插件 \"{use}\"", en: "channel {channel}: no channel plugin \"{use}\"" },
  "doctor.webhookUrl": { zh: "通道 {channel}：webhook 要在 config.json 里写 \"url\"（http 或 https 地址）", en: "channel {channel}: webhook needs \"url\" (an http or https address) in config.json" },
  "doctor.webhookPlatform": { zh: "通道 {channel}：不认识的 platform \"{platform}\"（dingtalk、wecom、slack、discord，或写 \"body\" 模板）", en: "channel {channel}: unknown platform \"{platform}\" (dingtalk, wecom, slack, discord, or a \"body\" template)" },
  "doctor.webhookNeeds": { zh: "通道 {channel}：webhook 要写 \"platform\" 或 \"body\" 模板", en: "channel {channel}: webhook needs \"platform\" or a \"body\" template" },
  "doctor.webhook": { zh: "通道 {channel}：webhook {platform}", en: "channel {channel}: webhook {platform}" },
  "doctor.customBody": { zh: "自定义 body", en: "custom body" },
  "doctor.anyone": { zh: "通道 {channel}：注意：没有设 answerers，那个聊天里谁都能回答它的卡片", en: "channel {channel}: note: no answerers set, so anyone in that chat can answer its cards" },
  "doctor.sandboxOffAgent": { zh: "Agent {agent}：注意：沙箱关着（rules.json 里写了 \"sandbox\": false），它读得到这个目录的密钥", en: "agent {agent}: note: sandbox off (\"sandbox\": false in rules.json), so it can read this home's keys" },
  "doctor.sandboxOff": { zh: "沙箱：{agents} 没有沙箱，读得到这个目录的密钥：{why}", en: "sandbox: off for {agents}, which can read this home's keys: {why}" },
  "doctor.sandboxFails": { zh: "沙箱：{bwrap} 在这里跑不起来（{error}），所以 {agents} 的轮次会失败 — 允许它建命名空间，或给它们写 \"sandbox\": false", en: "sandbox: {bwrap} does not run here ({error}), so runs of {agents} fail — let it make namespaces, or set \"sandbox\": false on them" },
  "doctor.sandboxOn": { zh: "沙箱：{agents} 在沙箱里跑（{version}）：看不到这个目录", en: "sandbox: on for {agents} ({version}): this home is hidden from them" },
  "doctor.cwdInside": { zh: "规则 {rule}：cwd {cwd} 在这个目录里面，沙箱对 Agent {agent} 藏起了它 — 换一个目录", en: "rule {rule}: cwd {cwd} is inside this home, which the sandbox hides from agent {agent} — choose another folder" },
  "sandbox.notLinux": { zh: "bubblewrap 只能在 Linux 上跑，这台电脑是 {platform}", en: "bubblewrap runs on Linux only, and this computer runs {platform}" },
  "sandbox.noBwrap": { zh: "没装 bubblewrap（bwrap）：装上它（Debian 和 Ubuntu：apt-get install bubblewrap）", en: "bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: apt-get install bubblewrap)" },
  // the hub's log lines and refusals of the shell
  "hub.rulesFailed": { zh: "规则：{error}", en: "rules: {error}" },
  "hub.closing": { zh: "中台正在关闭", en: "the hub is shutting down" },
  "hub.commitFailed": { zh: "提交失败：{error}", en: "commit failed: {error}" },
  "hub.timerFailed": { zh: "定时器：{error}；{seconds} 秒后再试", en: "timer: {error}; trying again in {seconds} s" },
  "hub.internalRequest": { zh: "内部出错：{method} {path}：{stack}", en: "internal error: {method} {path}: {stack}" },
  "hub.internalDecision": { zh: "内部出错：{error}", en: "internal error: {error}" },
  "hub.busy": { zh: "中台忙，请再试一次", en: "busy, try again" },
  "hub.busyBecause": { zh: "中台忙，请再试一次：{error}", en: "busy, try again: {error}" },
  "in.notList": { zh: "adapter 交回的不是列表", en: "the adapter did not return a list" },
  "in.adapterFailed": { zh: "adapter {adapter}：{error}", en: "adapter {adapter}: {error}" },
  "field.isoTime": { zh: "带 Z 或时差的真实 ISO 日期时间", en: "a real ISO date-time with Z or an offset" },
  "serve.listen": { zh: "listen：应为 主机:端口，现在是 {value}", en: "listen: expected HOST:PORT, got {value}" },
  "loop.uncaught": { zh: "{part}：未捕获的异常：{error}", en: "{part}: uncaught exception: {error}" },
  "loop.unhandled": { zh: "{part}：未处理的 Promise 拒绝：{error}", en: "{part}: unhandled rejection: {error}" },
  "loop.restart": { zh: "{part}：{why}；{delay} 后重启", en: "{part}: {why}; restarting in {delay}" },
  "loop.returned": { zh: "结束了", en: "returned" },
  "loop.faulted": { zh: "被未捕获的错误停掉了", en: "stopped by an uncaught error" },
  "loop.seconds": { zh: "{seconds} 秒", en: "{seconds} s" },
  "worker.log": { zh: "接单程序 {name}：{error}", en: "worker {name}: {error}" },
  "worker.runLog": { zh: "第 {run} 轮：{error}", en: "run {run}: {error}" },
  "worker.resultRefused": { zh: "第 {run} 轮：中台不收这份结果：{error}", en: "run {run}: the hub refused the result: {error}" },
  "worker.noSandbox": { zh: "接单程序 {name}：Agent 不在沙箱里跑，读得到这个目录：{why}", en: "worker {name}: agents run without a sandbox and can read this home: {why}" },
  // home files and plugins
  "home.configObject": { zh: "{file}：应为一个 JSON 对象", en: "{file}: must hold a JSON object" },
  "home.configListen": { zh: "{file}：listen 应为 \"主机:端口\"", en: "{file}: listen must be \"HOST:PORT\"" },
  "home.configOwner": { zh: "{file}：owner 应为本人密钥", en: "{file}: owner must be the owner key" },
  "home.configWorker": { zh: "{file}：worker 要写 name 和 key", en: "{file}: worker needs name and key" },
  "home.configChannel": { zh: "{file}：channels.{name} 要写 use 和 key", en: "{file}: channels.{name} needs use and key" },
  "home.noMasterKey": { zh: "{file} 不见了", en: "{file} is missing" },
  "home.masterKey": { zh: "{file}：应为 64 个十六进制字符", en: "{file}: expected 64 hex characters" },
  "home.homeId": { zh: "{file}：应为 22 个 A-Z a-z 0-9 _ - 字符；删掉这个文件就会得到新的编号", en: "{file}: expected 22 characters A-Z a-z 0-9 _ -; delete the file to get a new id" },
  "home.homeIdCreate": { zh: "{file}：建不了", en: "{file}: cannot be created" },
  "plugins.notFound": { zh: "没有 {kind} 插件 \"{name}\"（找过 {dir} 和内置插件）", en: "no {kind} plugin \"{name}\" (looked in {dir} and the built-in plugins)" },
  "plugins.noDefault": { zh: "{file}：没有默认导出", en: "{file}: no default export" },
} satisfies Record<string, Entry>;

/** The id of a message of the catalog. */
export type MessageId = keyof typeof catalog;

/**
 * Picks the language from the environment: `AGENT_AUTOLOOP_LANG` when set and not empty, else `LANG`; a value that
 * starts with `zh` (any case) is Chinese, anything else English. Nothing else of the locale (`LC_ALL`, `LC_MESSAGES`)
 * counts, so one variable decides and a person can always tell which.
 */
export function langFromEnv(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Lang {
  const v = (env.AGENT_AUTOLOOP_LANG || env.LANG || "").toLowerCase();
  return v.startsWith("zh") ? "zh" : "en";
}

/**
 * Formats a message of the catalog in `lang`, replacing `{name}` with params.name.
 * Unknown placeholders are left as they are (a visible defect, never a crash).
 */
export function t(lang: Lang, id: MessageId, params: Params = {}): string {
  const entry: Entry = catalog[id];
  return entry[lang].replace(placeholder, (m, k: string) => (k in params ? String(params[k]) : m));
}

/** A `{name}` placeholder of a catalog text. */
const placeholder = /\{(\w+)\}/g;

/**
 * Messages whose Chinese text is the protocol's own (protocol.md fixes it, or it is text the hub puts into data:
 * facts, events, jobs). The hub writes these in Chinese whatever its language, so the same inputs give the same
 * facts and answers on every machine; their English text only serves `localize`, which shows them to a person.
 */
export const fixedMessageIds = [
  "notFound.rule", "control.paused", "control.manualSummary", "budget.reason",
  "rejected.scope", "rejected.noEmits", "rejected.type", "rejected.noCard", "rejected.closed",
] as const satisfies readonly MessageId[];

/** A message whose text the protocol fixes or that goes into data (see `fixedMessageIds`). */
export type FixedMessageId = (typeof fixedMessageIds)[number];

/** The text of a fixed message (see `fixedMessageIds`): the same on every machine, whatever the hub's language. */
export function fixedText(id: FixedMessageId, params: Params = {}): string {
  return t("zh", id, params);
}

type Pattern = { id: MessageId; re: RegExp; names: string[]; literal: number };
let patterns: Pattern[] | null = null;

/**
 * Every catalog text in both languages as an anchored pattern, the most specific (most literal characters) first;
 * built on first use (the CLI needs it only for what it shows of a hub's answers).
 */
function catalogPatterns(): Pattern[] {
  if (patterns) return patterns;
  patterns = [];
  for (const id of Object.keys(catalog) as MessageId[]) {
    for (const text of new Set([catalog[id].zh, catalog[id].en])) {
      const names: string[] = [];
      const parts = text.split(placeholder); // literal, name, literal, name, …, literal
      const literal = parts.filter((_, i) => i % 2 === 0).join("").replace(/[\s\p{P}]/gu, "").length;
      if (literal < 2) continue; // only placeholders and punctuation: it would match almost anything
      const source = parts.map((part, i) => {
        if (i % 2 === 0) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        if (names.includes(part)) return `\\k<${part}>`;
        names.push(part);
        return `(?<${part}>.*?)`;
      }).join("");
      patterns.push({ id, re: new RegExp(`^${source}$`, "su"), names, literal });
    }
  }
  patterns.sort((a, b) => b.literal - a.literal);
  return patterns;
}

/** `text` in `lang` when it is a catalog text in either language, else null. */
function relocalize(text: string, lang: Lang): string | null {
  for (const p of catalogPatterns()) {
    const m = p.re.exec(text);
    if (m) return t(lang, p.id, Object.fromEntries(p.names.map((n) => [n, m.groups![n]!])));
  }
  return null;
}

/**
 * Shows a text that came from the catalog, in either language, in `lang`: a hub's refusal or a fixed text of the
 * protocol (see `fixedMessageIds`) reaches a person in that person's language. A text that is not one catalog text
 * is looked up line by line; a line that is no catalog text (a person's or a program's own words) stays as it is.
 */
export function localize(text: string, lang: Lang): string {
  return relocalize(text, lang) ?? text.split("\n").map((line) => relocalize(line, lang) ?? line).join("\n");
}

/** Every message of the catalog with its two texts (for the catalog's own tests). */
export function catalogEntries(): [MessageId, Entry][] {
  return Object.entries(catalog) as [MessageId, Entry][];
}
