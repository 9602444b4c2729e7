# Installs agent-autoloop from this folder (a git checkout or an unpacked release) and runs it as a per-user scheduled
# task that starts at logon, hidden, and again 10 s after it exits: checks Node.js, installs the packages and builds
# when that was not done yet, limits the home's ACL to this user, then runs `agent-autoloop install`.
#   powershell -ExecutionPolicy Bypass -File .\install.ps1 -Yes
param([switch]$Yes)
$ErrorActionPreference = 'Stop'
Set-Location -LiteralPath $PSScriptRoot
$node = Get-Command node -ErrorAction SilentlyContinue
if (-not $node) { Write-Error 'install.ps1: Node.js 20 or newer is needed (https://nodejs.org)'; exit 1 }
$major = [int](& node -p 'process.versions.node.split(".")[0]')
if ($major -lt 20) { Write-Error "install.ps1: Node.js 20 or newer is needed; this is $(& node --version)"; exit 1 }
if (-not (Test-Path -LiteralPath 'node_modules')) {
  & npm ci --no-audit --no-fund
  if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
} elseif (-not (Test-Path -LiteralPath 'dist\src\cli\main.js')) {
  & npm run build
  if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
}
$arguments = @((Join-Path $PSScriptRoot 'bin\agent-autoloop.js'), 'install')
if ($Yes) { $arguments += '--yes' }
& $node.Source @arguments
exit $LASTEXITCODE
