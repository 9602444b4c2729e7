#!/bin/sh
# Installs agent-autoloop from this folder (a git checkout or an unpacked release) and runs it as a per-user service:
# checks Node.js, installs the packages and builds when that was not done yet, then runs `agent-autoloop install`
# (a systemd user unit on Linux, a launchd agent on macOS). Arguments go to it: ./install.sh --yes
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if ! command -v node >/dev/null 2>&1; then
  echo "install.sh: Node.js 20 or newer is needed (https://nodejs.org, or your system's package manager)" >&2
  exit 1
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "install.sh: Node.js 20 or newer is needed; this is $(node --version)" >&2
  exit 1
fi
if [ ! -d node_modules ]; then
  npm ci --no-audit --no-fund
elif [ ! -f dist/src/cli/main.js ]; then
  npm run build
fi
exec node "$here/bin/agent-autoloop.js" install "$@"
