#!/usr/bin/env node
// A tiny `command` agent for the walkthrough and the tests. It reads the context file the worker wrote
// (AGENT_AUTOLOOP_CONTEXT) and prints its last message, which is its receipt:
// - with no answer yet: it asks the owner a question with two options and ends the run;
// - with an answer: it finishes, naming the choice.
import { readFileSync } from "node:fs";

const context = JSON.parse(readFileSync(process.env.AGENT_AUTOLOOP_CONTEXT, "utf8"));
const answer = context.answers.at(-1);
if (!answer) {
  const event = context.events[0] ?? {};
  const about = event.subject ? `${event.source} ${event.subject}` : event.source ?? "this event";
  const receipt = {
    ask: [{
      title: `How should I handle ${about}?`,
      text: event.summary ?? "",
      options: ["Fix it now", "Leave it for later"],
      recommend: 0,
      about: `event ${event.id ?? "?"}: ${event.link ?? ""}`,
      key: `handle-${event.subject ?? event.id ?? "event"}`,
    }],
  };
  console.log(`Needs you: choose how to handle ${about}.`);
  console.log("```agent-autoloop");
  console.log(JSON.stringify(receipt, null, 2));
  console.log("```");
} else {
  const chosen = answer.choice !== null && answer.choice !== undefined ? answer.options[answer.choice] : answer.text;
  console.log(`Done: the owner chose "${chosen}" for card ${answer.card}.`);
}
