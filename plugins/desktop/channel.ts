/**
 * The built-in `desktop` channel (protocol.md 通道模板与命令行示例): a system notification per new card —
 * Linux `notify-send` (text after `--`), macOS `osascript` (text as arguments), Windows a toast from a fixed
 * PowerShell script fed base64 JSON (the text is never PowerShell code). Without a graphical session it calls
 * nothing and reports `skipped-<card id>` once; updates of a card are only reported, never shown again. The text is
 * the card's title and the first lines of its card template (issue 18), then where to see the card.
 */
import { execFile } from "node:child_process";
import { eachCard, templateLines, type Card, type ChannelArgs, type Lang } from "agent-autoloop/sdk";

const lang: Lang = /^zh/i.test(process.env.AGENT_AUTOLOOP_LANG || process.env.LANG || "") ? "zh" : "en";
const heading = lang === "zh" ? "Agent 问你一个问题" : "An agent has a question for you";
const noticeHeading = lang === "zh" ? "Agent 通知" : "Agent notice";

/** The most lines of a card template a notification shows: a notification points at the card, it is not the card. */
export const notificationTemplateLinesMax = 6;

/**
 * A notification's text: the card's title, its card template's first `notificationTemplateLinesMax` lines as every
 * text channel shows them (the SDK's `templateLines`; "…" when there are more), then where to see the card.
 */
export function notificationBody(card: Pick<Card, "title" | "templateUi">, lang: Lang): string {
  const lines = [card.title];
  if (card.templateUi) {
    const shown = templateLines(card.templateUi, lang);
    lines.push(...shown.slice(0, notificationTemplateLinesMax), ...(shown.length > notificationTemplateLinesMax ? ["…"] : []));
  }
  lines.push(lang === "zh" ? "运行 agent-autoloop status 查看" : "Run agent-autoloop status to see it");
  return lines.join("\n");
}

/** Whether a graphical session can show notifications. */
export function hasGraphicalSession(env: NodeJS.ProcessEnv = process.env, platform = process.platform): boolean {
  if (platform === "darwin" || platform === "win32") return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

const toastScript = [
  "$d = [System.Text.Encoding]::UTF8.GetString([System.Convert]::FromBase64String($args[0])) | ConvertFrom-Json",
  "[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null",
  "$x = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)",
  "$t = $x.GetElementsByTagName('text'); $t.Item(0).AppendChild($x.CreateTextNode($d.title)) > $null; $t.Item(1).AppendChild($x.CreateTextNode($d.body)) > $null",
  "[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('agent-autoloop').Show([Windows.UI.Notifications.ToastNotification]::new($x))",
].join("; ");

/** The program and arguments that show one notification on this platform. */
export function notifyCommand(title: string, body: string, platform = process.platform): [string, string[]] {
  if (platform === "darwin") {
    return ["osascript", ["-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", title, body]];
  }
  if (platform === "win32") {
    const data = Buffer.from(JSON.stringify({ title, body }), "utf8").toString("base64");
    return ["powershell.exe", ["-NoProfile", "-NonInteractive", "-Command", toastScript, data]];
  }
  // The body is markup to the notification server (<a href>, <b>, <img>): card text is shown as it is (round 25, F25b-3).
  return ["notify-send", ["--app-name=agent-autoloop", "--", title, markupLiteral(body)]];
}

/** `s` with the characters the freedesktop notification body reads as markup written as entities. */
export function markupLiteral(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 15_000 }, (err) => (err ? reject(err) : resolve()));
  });
}

export default async function desktopChannel({ hub, log, signal }: ChannelArgs): Promise<void> {
  await eachCard(hub, log, signal, async (card: Card) => {
    if (card.ref !== null) {
      await hub.delivered(card.id, card.version, card.ref).catch(() => {});
      return;
    }
    if (!hasGraphicalSession()) {
      await hub.delivered(card.id, card.version, `skipped-${card.id}`).catch(() => {});
      return;
    }
    const [cmd, args] = notifyCommand(card.kind === "ask" ? heading : noticeHeading, notificationBody(card, lang));
    try {
      await run(cmd, args);
      await hub.delivered(card.id, card.version, `desktop-${card.id}`);
    } catch (e) {
      await hub.failed(card.id, card.version, (e as Error).message).catch(() => {});
    }
  });
}
