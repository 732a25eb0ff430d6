#!/bin/sh
# Make sure a Docker engine answers on /var/run/docker.sock.
# Installs Debian's docker.io when dockerd is missing, starts dockerd in the background when
# the socket does not answer, and waits for it. Idempotent and quiet; exits non-zero on failure.
set -eu

SOCK=/var/run/docker.sock
LOG=${DOCKERD_LOG:-/tmp/dockerd.log}
WAIT=${DOCKERD_WAIT:-60}

answers() {
    docker version --format '{{.Server.Version}}' >/dev/null 2>&1
}

if answers; then
    exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "ensure-docker: dockerd is missing; install docker.io (needs root)" >&2
        exit 1
    fi
    echo "ensure-docker: installing docker.io" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null 2>&1 || {
        apt-get update -q >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io >/dev/null
    }
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "ensure-docker: dockerd is not running; start it as root" >&2
        exit 1
    fi
    rm -f "$SOCK"
    nohup dockerd >"$LOG" 2>&1 &
fi

i=0
while ! answers; do
    i=$((i + 1))
    if [ "$i" -gt "$((WAIT * 4))" ]; then
        echo "ensure-docker: dockerd did not answer within ${WAIT}s; see $LOG" >&2
        exit 1
    fi
    sleep 0.25
done
