/**
 * Patterns of the protocol that code outside the schema also matches with (the hub's path ids), kept free of TypeBox
 * so that a module using one does not load the schema library (a starting hub loads none: README "Measurements").
 */

/** A run or card id: 1 to 15 digits, no leading zero (a safe integer). */
export const idPattern = "^[1-9]\\d{0,14}$";
