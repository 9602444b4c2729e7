/** Tools offered to the real Codex CLI through the worker's tool bridge (see tests/real-tool-cases.ts). */
import { realToolScenarios } from "./real-tool-cases.js";

realToolScenarios("codex");
