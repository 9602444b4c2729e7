#!/usr/bin/env bash
# A minimal channel in shell: prints each card in the terminal and reports it delivered. Needs only curl and jq.
#   AGENT_AUTOLOOP_URL=http://127.0.0.1:8787 AGENT_AUTOLOOP_KEY=<channel key> examples/channel.sh
# AGENT_AUTOLOOP_ONCE=1: look once and exit. Answer the cards with `agent-autoloop answer <card> <n>`.
set -euo pipefail
url="${AGENT_AUTOLOOP_URL:?set AGENT_AUTOLOOP_URL}"
key="${AGENT_AUTOLOOP_KEY:?set AGENT_AUTOLOOP_KEY}"
wait=50
[ "${AGENT_AUTOLOOP_ONCE:-}" = 1 ] && wait=0

call() { # method path [body] → prints the answer; fails on HTTP errors with the hub's message
  # The key goes to curl on its stdin (-H @-; printf is bash's own), never on its command line, which every local
  # user reads in /proc/<pid>/cmdline (curl 7.55 or newer).
  local out status
  out=$(printf 'Authorization: Bearer %s\n' "$key" | curl -sS -X "$1" "$url$2" -H @- -H 'content-type: application/json' ${3:+--data "$3"} -w '\n%{http_code}')
  status="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [ "$status" -ge 400 ]; then echo "channel.sh: $1 $2: HTTP $status: $(jq -r '.error // .' <<<"$out")" >&2; return 1; fi
  printf '%s\n' "$out"
}

while :; do
  card=$(call GET "/v1/cards/next?wait=$wait" | jq -c '.card')
  if [ "$card" != null ]; then
    jq -r '"── card \(.id) v\(.version) · \(.kind) · \(.state)\n\(.title)\n\(.text)" + ([.options | to_entries[] | "  \(.key)) \(.value)"] | map("\n" + .) | join("")) + (if .link then "\n\(.link)" else "" end)' <<<"$card"
    id=$(jq -r '.id' <<<"$card")
    version=$(jq -r '.version' <<<"$card")
    ref=$(jq -r '.ref // "terminal-\(.id)"' <<<"$card")
    call POST "/v1/cards/$id/delivered" "$(jq -nc --argjson v "$version" --arg r "$ref" '{version: $v, ref: $r}')" >/dev/null
  fi
  [ "${AGENT_AUTOLOOP_ONCE:-}" = 1 ] && exit 0
done
