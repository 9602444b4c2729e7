#!/usr/bin/env bash
# A minimal worker in shell: claims one job at a time and hands in a receipt. Needs only curl and jq.
#   AGENT_AUTOLOOP_URL=http://127.0.0.1:8787 AGENT_AUTOLOOP_KEY=<worker key> examples/worker.sh
# AGENT_AUTOLOOP_RECEIPT: the JSON it hands in (default {"outcome":"done"}); AGENT_AUTOLOOP_ONCE=1: claim once and exit.
# Short jobs only: it sends no heartbeats while working, and does not survive its own restart mid-job.
set -euo pipefail
url="${AGENT_AUTOLOOP_URL:?set AGENT_AUTOLOOP_URL}"
key="${AGENT_AUTOLOOP_KEY:?set AGENT_AUTOLOOP_KEY}"
receipt="${AGENT_AUTOLOOP_RECEIPT:-{\"outcome\":\"done\"\}}"
wait=50
[ "${AGENT_AUTOLOOP_ONCE:-}" = 1 ] && wait=0

call() { # method path token [body] → prints the answer; fails on HTTP errors with the hub's message
  # The key goes to curl on its stdin (-H @-; printf is bash's own), never on its command line, which every local
  # user reads in /proc/<pid>/cmdline (curl 7.55 or newer).
  local out status
  out=$(printf 'Authorization: Bearer %s\n' "$3" | curl -sS -X "$1" "$url$2" -H @- -H 'content-type: application/json' ${4:+--data "$4"} -w '\n%{http_code}')
  status="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [ "$status" -ge 400 ]; then echo "worker.sh: $1 $2: HTTP $status: $(jq -r '.error // .' <<<"$out")" >&2; return 1; fi
  printf '%s\n' "$out"
}

claim="sh-$$-$RANDOM"
while :; do
  answer=$(call GET "/v1/work?claim=$claim&wait=$wait&capacity=1" "$key")
  job=$(jq -c '.job' <<<"$answer")
  if [ "$job" != null ]; then
    run=$(jq -r '.run' <<<"$job")
    token=$(jq -r '.token' <<<"$job")
    echo "run $run: $(jq -r '.rule.name' <<<"$job"), $(jq '.context.events | length' <<<"$job") events, $(jq '.context.answers | length' <<<"$job") answers"
    call POST "/v1/runs/$run/started" "$token" '{}' >/dev/null
    body=$(jq -c '{outcome: "done"} + .' <<<"$receipt")
    call POST "/v1/runs/$run/result" "$token" "$body" >/dev/null
    echo "run $run: handed in $(jq -r '.outcome' <<<"$body")"
    claim="sh-$$-$RANDOM"
  fi
  [ "${AGENT_AUTOLOOP_ONCE:-}" = 1 ] && exit 0
done
