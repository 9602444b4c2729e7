/** The `claude` plugin with the real Claude Code CLI against the fake model (see tests/real-cli-cases.ts). */
import { realCliScenarios } from "./real-cli-cases.js";

realCliScenarios("claude", 9871);
