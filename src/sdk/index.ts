/**
 * The plugin SDK, `agent-autoloop/sdk`: the only part of the engine a plugin imports (DESIGN.md). It holds the
 * contracts of each plugin kind and the small helpers they share; it never loads the hub (no database, no HTTP
 * server), so a plugin loads the same in the hub, a worker and its output thread.
 *
 * - agent plugins (plugins.md Agent 插件): `Turn`, `AgentPlugin`, `AgentRead`, `findProgram`, `tail`, `jsonLines`, …;
 *   the state of the CLIs the built-in plugins run, with the parts that steer them (`claudeCodeState`, `codexState`);
 *   starting a program without a shell on every system (`launchArgv`: the Windows launch rules, plugins.md Windows)
 * - channel plugins (plugins.md 通道插件): `Card`, `ChannelArgs` and its `ChannelHub`, `eachCard`, `cardText`, …;
 *   a card template's text projection (`templateLines`, issue 18); the safe Markdown subset of templates as tokens
 *   (`markdownBlocks`, `inlineSpans`, `httpUrl`), for a channel that renders a template in its own markup
 * - source plugins (plugins.md 事件插件): `SourceArgs`, `SourceEvent`, `Refusal`, `neutralise`, …
 * - text for people in Chinese or English: `langFromEnv`, `t` (the engine's message catalog, for built-in plugins).
 */
export * from "./agent.js";
export * from "./cli-state.js";
export * from "./launch.js";
export * from "./channel.js";
export * from "./card-template.js";
export { httpUrl, inlineSpans, markdownBlocks, type InlineSpan, type MarkdownBlock } from "./markdown.js";
export * from "./source.js";
/** Text the hub would refuse (control and bidi characters) removed or replaced, for free text from outside. */
export { neutralise } from "../kernel/text.js";
export { parseJson, type TextPosition } from "../kernel/json-error.js";
export { langFromEnv, t, type Lang, type MessageId } from "../i18n/messages.js";
