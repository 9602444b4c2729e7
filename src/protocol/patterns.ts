/**
 * Patterns of the protocol that code outside the schema also matches with (the hub's path ids, the worker's session
 * links), kept free of TypeBox so that a module using one does not load the schema library (a starting hub or worker
 * loads none: README "Measurements"; tests/lean-start.test.ts).
 */

/** A link an agent reports for its session: an ASCII URL of any scheme but javascript/data, no spaces. */
export const sessionLinkPattern = "^(?![jJ][aA][vV][aA][sS][cC][rR][iI][pP][tT]:|[dD][aA][tT][aA]:)[A-Za-z][A-Za-z0-9+.-]*:[!-~]+$";

/** A run or card id: 1 to 15 digits, no leading zero (a safe integer). */
export const idPattern = "^[1-9]\\d{0,14}$";
