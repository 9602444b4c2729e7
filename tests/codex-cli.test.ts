/** The `codex` plugin with the real Codex CLI against the fake model (see tests/real-cli-cases.ts). */
import { realCliScenarios } from "./real-cli-cases.js";

realCliScenarios("codex", 9881);
