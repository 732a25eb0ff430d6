#!/usr/bin/env bash
# Install the Debian packages tui-agent needs, only those missing; quiet and idempotent.
set -euo pipefail

need=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_cmd bwrap || need+=(bubblewrap)
compgen -G '/usr/lib/*/libseccomp.so.2' >/dev/null || need+=(libseccomp2)  # bubblewrap's seccomp filter
have_cmd debootstrap || need+=(debootstrap)
have_cmd dockerd || need+=(docker.io)
have_cmd tmux || need+=(tmux)
# bubblewrap runs sandboxed code with the host's /usr: the libraries task code reaches for.
/usr/bin/python3 -c 'import pandas, fitz, pypdf' >/dev/null 2>&1 \
    || need+=(python3-pandas python3-fitz python3-pypdf)
have_cmd rsvg-convert || need+=(librsvg2-bin)
if [ -z "${TUI_AGENT_CHROMIUM:-}" ] && ! have_cmd chromium && ! have_cmd chromium-browser \
    && ! have_cmd google-chrome; then
  need+=(chromium)
fi
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)

if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "tui-agent needs these Debian packages: ${need[*]} (run as root or: sudo apt-get install ${need[*]})" >&2
  exit 1
fi
echo "installing Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
