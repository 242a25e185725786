#!/usr/bin/env bash
# apt-install.sh WHAT PACKAGE...: install the Debian packages given (the install scripts pass
# only those missing) non-interactively, with sudo when not root; WHAT names them in messages.
set -euo pipefail

what=$1
shift
[ $# -eq 0 ] && exit 0
echo "installing ${what}: $*"
if ! command -v apt-get >/dev/null; then
  echo "error: missing $* and no apt-get; install ${what} by hand" >&2
  exit 1
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@"
