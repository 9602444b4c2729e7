#!/usr/bin/env bash
# hello-bash: a sync tool plugin with jq. One JSON-RPC request per stdin line; one response per stdout line.
while IFS= read -r request; do
  [ -z "$request" ] && continue
  jq -c '
    if .method != "tools/call" then {jsonrpc: "2.0", id, error: {code: -32601, message: "method not found"}}
    elif .params.name != "greet" then {jsonrpc: "2.0", id, error: {code: -32602, message: "unknown tool"}}
    else {jsonrpc: "2.0", id, result: {content: ("hello, " + (.params.arguments.name // "world"))}}
    end' <<<"$request"
done
