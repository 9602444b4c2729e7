/**
 * Texts as data (issue 27 #2): the shapes of a catalog message id with its params, as refusals and facts carry them.
 * Part of the answer shapes (responses.ts re-exports them and publishes them among its definitions).
 */
import { Type } from "@sinclair/typebox";
import { ref } from "./shapes.js";

/**
 * A parameter of a refusal's text: plain, or a text of its own as `{ code, params }` (the `{what}` of a wrong format).
 */
export const TextParam = Type.Recursive((This) => Type.Union([
  Type.String(), Type.Number(),
  Type.Object({ code: Type.String(), params: Type.Record(Type.String(), This) }, { description: "a text of its own: a catalog message id and its params" }),
]), { $id: "TextParam" });

/** A text as data (issue 27 #2): a catalog message id and the values of its placeholders. */
export const TextRef = Type.Object({ code: Type.String(), params: Type.Record(Type.String(), ref(TextParam)) }, { description: "a catalog message id and its params" });
