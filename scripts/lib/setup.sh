# Sourced by the scripts/setup-*.sh that install a Debian package:
# - `setup_begin NAME "$@"` reads the script's arguments (`--quiet`: print only the result;
#   `--help`: print the script's header comment) and names it in `log` and `die`;
# - `log MESSAGE` (unless --quiet) and `die MESSAGE` (exit 1) write to stderr;
# - `apt_install TOOL PACKAGE` installs Debian's PACKAGE.
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
