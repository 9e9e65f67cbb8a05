#!/bin/sh
# A boardzoo engine in POSIX shell: it asks for the legal moves (feature legal) and plays the
# first one. An optional first argument makes it misbehave, for the arena's tests:
#   crash    exits as soon as it is asked for a move
#   illegal  answers a move that is not legal
#   silent   never answers anything, ignores SIGTERM and keeps a child process running
#   slow     completes the handshake but never answers `go`
#   hold     answers `go` only once the file named by $BOARDZOO_ENGINE_HOLD is gone
mode=${1:-play}
if [ "$mode" = silent ]; then
    trap '' TERM
    sleep 300 &
    while :; do sleep 1; done
fi
first=""
while IFS= read -r line; do
    set -- $line
    case "$1" in
        boardzoo)
            echo "id name first-legal.sh"
            echo "protocol 1"
            echo "games loa ultima whistling"
            echo "feature legal"
            echo "ok" ;;
        isready) echo "readyok" ;;
        legal) first=$2 ;;
        go)
            echo "first legal move: $first" >&2
            case "$mode" in
                crash) exit 3 ;;
                illegal) echo "bestmove z9-z10" ;;
                slow) sleep 300 ;;
                hold)
                    while [ -e "$BOARDZOO_ENGINE_HOLD" ]; do sleep 0.1; done
                    echo "bestmove $first" ;;
                *) echo "info depth 0 nodes 1"; echo "bestmove $first" ;;
            esac ;;
        quit) exit 0 ;;
    esac
done
