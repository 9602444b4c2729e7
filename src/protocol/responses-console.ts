/**
 * The answers of the owner console's endpoints (issues 17, 30): the sign-in link, the sessions listed and ended. Part
 * of the answer shapes (responses.ts re-exports them and publishes them among its definitions).
 */
import { Type, type Static } from "@sinclair/typebox";
import { int, iso, str } from "./shapes.js";

/** POST /v1/console/sign-in: the owner console's one-time sign-in link and when it stops working (issue 17). */
export const ConsoleLink = Type.Object({ link: str(), expiresAt: iso() }, { description: "POST /v1/console/sign-in" });
export type ConsoleLink = Static<typeof ConsoleLink>;

/**
 * DELETE /v1/console/sessions: how many console sessions ended (unused sign-in links are forgotten too); DELETE
 * /v1/console/sessions/:session: 1 when that session ended, 0 when there was none of that name.
 */
export const ConsoleEnded = Type.Object({ ended: int() }, { description: "DELETE /v1/console/sessions, DELETE /v1/console/sessions/:session" });
export type ConsoleEnded = Static<typeof ConsoleEnded>;

/** One owner console session as GET /v1/console/sessions lists it (issue 30): no cookie, no hash, only its name. */
export const ConsoleSessionView = Type.Object({
  session: Type.String({ description: "the session's name, for DELETE /v1/console/sessions/:session" }),
  origin: str(),
  signedIn: iso(),
  lastUsed: iso(),
  idleUntil: iso(),
  expiresAt: iso(),
});
/** GET /v1/console/sessions: the live owner console sessions, oldest sign-in first. */
export const ConsoleSessions = Type.Object({ sessions: Type.Array(ConsoleSessionView) }, { description: "GET /v1/console/sessions" });
export type ConsoleSessions = Static<typeof ConsoleSessions>;
