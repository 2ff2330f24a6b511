# Sourced by the scripts/setup-*.sh that install a Debian package:
# - `setup_begin NAME "$@"` reads the script's arguments (`--quiet`: print only the result;
#   `--help`: print the script's header comment) and names it in `log` and `die`;
# - `log MESSAGE` (unless --quiet) and `die MESSAGE` (exit 1) write to stderr;
# - `apt_install TOOL PACKAGE` installs Debian's PACKAGE;
# - `find_or_install TOOL PACKAGE VAR DIR…` prints TOOL's binary, installing PACKAGE first
#   when there is none.
setup_begin() {
    SETUP_NAME="$1"
    shift
    SETUP_QUIET=0
    for arg in "$@"; do
        case "$arg" in
            --quiet) SETUP_QUIET=1 ;;
            -h | --help)
                awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
                exit 0
                ;;
            *)
                echo "$SETUP_NAME: unknown argument '$arg' (try --help)" >&2
                exit 2
                ;;
        esac
    done
}

log() { [ "${SETUP_QUIET:-0}" = 1 ] || echo "$SETUP_NAME: $*" >&2; }
die() {
    echo "$SETUP_NAME: error: $*" >&2
    exit 1
}

# `apt_install TOOL PACKAGE` installs Debian's PACKAGE
# (needing root or password-less sudo, and Debian's package mirrors) without starting
# its service: a policy-rc.d refusal is in place for the install when none exists, since
# the tests start their own instances. Dies (through the caller's `die`) with the reason
# when it cannot.
apt_install() {
    local tool="$1" package="$2"
    local as_root=()
    if [ "$(id -u)" != 0 ]; then
        sudo -n true 2>/dev/null || die "$tool is not installed and installing it needs root: run 'sudo apt-get install $package'"
        as_root=(sudo -n)
    fi
    command -v apt-get >/dev/null || die "$tool is not installed and there is no apt-get here: install it yourself"
    local policy=/usr/sbin/policy-rc.d own_policy=0
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' | "${as_root[@]}" tee "$policy" >/dev/null
        "${as_root[@]}" chmod 755 "$policy"
        own_policy=1
    fi
    local ok=1
    "${as_root[@]}" apt-get update -qq >&2 || ok=0
    if [ "$ok" = 1 ]; then
        DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$package" >&2 || ok=0
    fi
    [ "$own_policy" = 1 ] && "${as_root[@]}" rm -f "$policy"
    [ "$ok" = 1 ] || die "apt-get could not install $package (no network to the Debian mirrors?)"
}

# `find_tool TOOL VAR DIR…` prints TOOL's binary: $VAR when set (dies unless it is an
# executable), else TOOL on PATH, else DIR/TOOL for the first DIR that has it (for binaries
# in an sbin, not on a user's PATH); nothing when there is none.
find_tool() {
    local tool="$1" var="$2"
    shift 2
    local given="${!var:-}"
    if [ -n "$given" ]; then
        [ -x "$given" ] || die "$var=$given is not an executable"
        echo "$given"
        return
    fi
    command -v "$tool" 2>/dev/null && return
    local dir
    for dir in "$@"; do
        [ -x "$dir/$tool" ] && echo "$dir/$tool" && return
    done
    return 0
}

# `find_or_install TOOL PACKAGE VAR DIR…` prints TOOL's binary as `find_tool` finds it; when
# there is none, installs Debian's PACKAGE and looks again (dies if it is still missing).
find_or_install() {
    local tool="$1" package="$2" var="$3"
    shift 3
    local bin
    # (Called as `$(find_or_install …)`, where `set -e` does not reach: exit by hand.)
    bin="$(find_tool "$tool" "$var" "$@")" || exit 1
    if [ -z "$bin" ]; then
        log "installing Debian's $package package"
        apt_install "$tool" "$package" || exit 1
        bin="$(find_tool "$tool" "$var" "$@")" || exit 1
        [ -n "$bin" ] || die "the $package package installed no $tool binary"
    fi
    echo "$bin"
}
