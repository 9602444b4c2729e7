/**
 * The commands that work on the home's own files, with or without a hub (they load what they use when they run):
 * `recipe list | add | remove` (issue 29) and `backup` / `restore` (issue 32). Kept out of main.ts (issue 27: no
 * module over 500 lines).
 */
import type { Command } from "commander";
import { t, type Lang } from "../i18n/messages.js";
import { say } from "./print.js";
import type { Config, Home } from "../host/home.js";

/** What these commands take from main.ts: the CLI's language and how it finds this home. */
export interface HomeCommandContext {
  lang: Lang;
  /** This home's paths (it may not be set up yet). */
  home: () => Promise<Home>;
  /** This home with its config.json read. @throws CliError when the home is not set up yet. */
  setUpHome: () => Promise<{ h: Home; config: Config }>;
}

/** Adds `backup`, `restore` and `recipe` to the program `p`. */
export function registerHomeCommands(p: Command, { lang, home, setUpHome }: HomeCommandContext): void {
  // The home in one archive and back (issue 32): local files and SQLite's backup API, no hub needed.
  p.command("backup")
    .description(t(lang, "cli.desc.backup"))
    .argument("<file>", t(lang, "cli.arg.archive"))
    .action(async (file: string) => {
      const [{ h }, { backupHome }] = await Promise.all([setUpHome(), import("./backup.js")]);
      say((await backupHome(h, file, lang)).join("\n"));
    });
  p.command("restore")
    .description(t(lang, "cli.desc.restore"))
    .argument("<file>", t(lang, "cli.arg.archive"))
    .action(async (file: string) => {
      const [h, { restoreHome }] = await Promise.all([home(), import("./backup.js")]);
      say((await restoreHome(h, file, lang)).join("\n"));
    });

  // Ready-made scenarios (issue 29): local files only, no hub needed (the hub reloads rules.json by itself).
  const recipe = p.command("recipe").description(t(lang, "cli.desc.recipe"));
  recipe.command("list")
    .description(t(lang, "cli.desc.recipeList"))
    .action(async () => {
      const [h, { listRecipes }] = await Promise.all([home(), import("./recipe.js")]);
      say(listRecipes(h, lang));
    });
  recipe.command("add")
    .description(t(lang, "cli.desc.recipeAdd"))
    .argument("<name>", t(lang, "cli.arg.recipe"))
    .option("--dir <folder>", t(lang, "cli.desc.recipeDir"))
    .action(async (name: string, o: { dir?: string }) => {
      const [{ h, config }, { addRecipe }] = await Promise.all([setUpHome(), import("./recipe.js")]);
      say(addRecipe(h, name, config.worker?.name ?? "local", o.dir, lang).join("\n"));
    });
  recipe.command("remove")
    .description(t(lang, "cli.desc.recipeRemove"))
    .argument("<name>", t(lang, "cli.arg.recipe"))
    .action(async (name: string) => {
      const [{ h }, { removeRecipe }] = await Promise.all([setUpHome(), import("./recipe.js")]);
      say(removeRecipe(h, name, lang).join("\n"));
    });
}
