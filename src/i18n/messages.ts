/**
 * The message catalog: every text meant for a person, in Chinese and English.
 * The language comes from `AGENT_AUTOLOOP_LANG`, else `LANG` (anything starting with `zh` is Chinese, else English).
 * Texts the protocol fixes (for example `没有这条规则：<名字>`) are not here: they stay exactly as specified.
 */

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
  "budget.kept": { zh: "保持暂停", en: "Kept paused" },
  "tell.sourceTask": { zh: "task：来源的密钥只能以自己的名义说话", en: "task: a source key speaks only for its own source" },
  "tell.noTask": { zh: "没有这个 elsewhere 任务：{name}", en: "no such elsewhere task: {name}" },
  "tell.notYourTask": { zh: "任务「{name}」不是交给这个接单程序的", en: "task \"{name}\" is not given to this worker" },
  "tell.askOrText": { zh: "ask 和 key/text 只能写一种", en: "give either ask or key and text, not both" },
  "tell.askNeedsCwd": { zh: "ask：只有写了 cwd 的 elsewhere 任务能提问", en: "ask: only an elsewhere task with cwd can ask" },
  "in.noAdapter": { zh: "rules.json 里没有配置了 adapter 的来源 {source}", en: "rules.json declares no source {source} with an adapter" },
  "in.refused": { zh: "不接受：这个地址只收用来源的秘密签过名的 Webhook", en: "not accepted: this address takes only webhooks signed with their source's secret" },
  "in.refusedLog": { zh: "Webhook /v1/in/{source} 在读请求体之前被拒：{reason}", en: "webhook /v1/in/{source} refused before its body was read: {reason}" },
  "in.noSecret": { zh: "没有秘密：在 secrets.env 里设置 {variable}，然后重启中台", en: "no secret: set {variable} in secrets.env and restart the hub" },
  "in.noSignature": { zh: "请求没有 {header} 头", en: "the request has no {header} header" },
  "in.bad": { zh: "adapter 交回的第 {n} 条事件不合法：{error}", en: "event {n} from the adapter is invalid: {error}" },
  "link.expired": { zh: "这个链接已经过期（卡片创建 7 天后失效）", en: "This link has expired (links last 7 days from the card's creation)" },
  "link.unknown": { zh: "没有这张卡片，或链接不对", en: "No such card, or the link is wrong" },
  "link.recommended": { zh: "推荐", en: "recommended" },
  "link.sendText": { zh: "用这段话回答", en: "Answer with these words" },
  "link.answer": { zh: "回答", en: "Answer" },
  "link.answered": { zh: "已回答", en: "Answered" },
  // texts of chat channels (webhook, feishu)
  "channel.fyi": { zh: "仅告知", en: "FYI" },
  "channel.answerHere": { zh: "点击处理", en: "Answer here" },
  "channel.answerLine": { zh: "回答：{answer}", en: "Answer: {answer}" },
  "channel.byLine": { zh: "回答人：{by}", en: "By: {by}" },
  "channel.resultLine": { zh: "结果：{result}", en: "Result: {result}" },
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
  "add.done": { zh: "已安装插件 {name} 到 {dir}；在 rules.json 里用 \"use\": \"{name}\" 或 \"adapter\": \"{name}\"", en: "installed plugin {name} in {dir}; use it with \"use\": \"{name}\" or \"adapter\": \"{name}\" in rules.json" },
  "cli.choice": { zh: "choice：写选项的编号（0、1……），自己的话用 --text", en: "choice: the option's number (0, 1, …); use --text for your own words" },
  "cli.keyConfig": { zh: "已把新密钥写进 config.json；重启 serve 后本机的{what}才用新密钥", en: "config.json now holds the new key; restart serve so the local {what} uses it" },
  "cli.keyConfigRemoved": { zh: "注意：config.json 里的{what}还在用这把已删除的密钥", en: "note: the local {what} in config.json still uses this removed key" },
  "serve.locked": { zh: "这个目录已经有一个中台在运行（进程 {pid}）：{home}", en: "another hub already runs on this home (pid {pid}): {home}" },
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
  "card.done.title": { zh: "「{rule}」做完了", en: "\"{rule}\" is done" },
  "card.receipt.title": { zh: "第 {run} 轮的回执读不懂，已作废", en: "The receipt of run {run} could not be read and was voided" },
  // CLI
  "cli.init.created": { zh: "已创建 {home}", en: "created {home}" },
  "cli.init.exists": { zh: "{home} 已经初始化过，什么都没改", en: "{home} is already set up; nothing changed" },
  "cli.hubDown": { zh: "连不上中台 {url}：{error}。先运行 agent-autoloop serve", en: "cannot reach the hub at {url}: {error}. Start it with agent-autoloop serve" },
  "cli.noHome": { zh: "{home} 还没初始化，先运行 agent-autoloop init", en: "{home} is not set up yet; run agent-autoloop init first" },
  "cli.noOwner": { zh: "config.json 里没有本人密钥（owner）", en: "config.json has no owner key" },
  "cli.check.ok": { zh: "{file} 没问题：{rules} 条规则，{agents} 个 Agent，{sources} 个来源，{channels} 个通道，{elsewhere} 个 elsewhere 任务", en: "{file} is valid: {rules} rules, {agents} agents, {sources} sources, {channels} channels, {elsewhere} elsewhere tasks" },
  "cli.unreleased": { zh: "未发布", en: "unreleased" },
  "serve.listening": { zh: "listening on {url}", en: "listening on {url}" },
  "serve.noRules": { zh: "读不到规则 {file}：{error}。从没载入过规则的中台不启动。", en: "cannot load rules {file}: {error}. A hub that never loaded rules does not start." },
} satisfies Record<string, Entry>;

export type MessageId = keyof typeof catalog;

/** Picks the language from the environment: AGENT_AUTOLOOP_LANG, then LANG; `zh*` → Chinese, else English. */
export function langFromEnv(env: NodeJS.ProcessEnv | Record<string, string | undefined>): Lang {
  const v = (env.AGENT_AUTOLOOP_LANG || env.LC_ALL || env.LANG || "").toLowerCase();
  return v.startsWith("zh") ? "zh" : "en";
}

/**
 * Formats a message of the catalog in `lang`, replacing `{name}` with params.name.
 * Unknown placeholders are left as they are (a visible defect, never a crash).
 */
export function t(lang: Lang, id: MessageId, params: Params = {}): string {
  const entry: Entry = catalog[id];
  return entry[lang].replace(/\{(\w+)\}/g, (m, k: string) => (k in params ? String(params[k]) : m));
}
